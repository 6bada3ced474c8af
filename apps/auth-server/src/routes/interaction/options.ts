import type { AuthenticationMethod, Client, OAuthError, ProtocolStores } from '@oidc-orders/oauth-core';
import type { FastifyReply } from 'fastify';
import type {
  AuthorizationFlow,
  NextStep,
  SignInRequirements,
} from '../../interaction/authorization-flow.js';
import type { ConsentRepository } from '../../interaction/consent-repository.js';
import type { InteractionRepository } from '../../interaction/interaction-repository.js';
import type { PasskeyRepository } from '../../mfa/passkey-repository.js';
import type { RecoveryCodeRepository } from '../../mfa/recovery-codes.js';
import type { TotpRepository } from '../../mfa/totp-repository.js';
import type { RelyingParty } from '../../mfa/webauthn.js';
import type { WebAuthnChallengeStore } from '../../mfa/webauthn-challenges.js';
import type { PageContext } from '../authorization-reply.js';
import type { KerberosSignInOptions } from './kerberos.js';
import type { UpstreamSignInOptions } from './upstream.js';

/** One login attempt, as a rate limiter sees it. */
export interface LoginAttempt {
  ip: string;
  username: string;
}

/** What a guard decides before the password is checked; a refusal says how long to wait. */
export type LoginAttemptDecision =
  | {
      allowed: true;
      /** Attempts left before the lock (fewest over the limits that apply), when a limit applies. */
      remaining?: number;
      /** How long the lock then lasts, seconds. */
      lockSeconds?: number;
    }
  | { allowed: false; limit: 'username' | 'ip'; retryAfterSeconds: number };

/**
 * Throttles login attempts per IP and per username (src/http/login-attempt-limiter.ts). `allow`
 * runs before the password is checked; refusing answers 429 (with `Retry-After`) without checking it.
 */
export interface LoginAttemptGuard {
  allow(attempt: LoginAttempt): Promise<LoginAttemptDecision>;
  recordFailure(attempt: LoginAttempt): Promise<void>;
  recordSuccess(attempt: LoginAttempt): Promise<void>;
}

/** The step that ends an interaction: signed in, consent given (or not needed). */
export type CompleteStep = Extract<NextStep, { kind: 'complete' }>;

/**
 * What an interaction is for, once loaded and re-validated: answering an /authorize request (code
 * or error to the client's redirect URI), approving a device (RFC 8628) or signing in to the
 * account page. Login and consent work the same for all; only the ending differs.
 */
export interface InteractionPurpose {
  client: Client;
  requirements: SignInRequirements;
  /** OIDC `login_hint`, pre-filled on the login page. */
  loginHint: string | undefined;
  /** CSP `form-action` sources the pages need beyond 'self' (the client's redirect URI origin). */
  formActionSources: string[];
  /** Extra text on the consent page. */
  consentNotice?: string;
  /** Called once the interaction is consumed and the user consented. */
  complete(reply: FastifyReply, step: CompleteStep): Promise<FastifyReply>;
  /** Called once the interaction is consumed after the user pressed Deny. */
  deny(reply: FastifyReply, sub: string | null): Promise<FastifyReply>;
  /** Called once the interaction is consumed when `nextStep` ended in an error. */
  fail(reply: FastifyReply, error: OAuthError): Promise<FastifyReply>;
}

/**
 * Resolves interactions that carry a device code hash (started by the verification page). Returns
 * `null` after sending a page when the device code can no longer be approved.
 */
export type DevicePurposeResolver = (
  deviceCodeHash: string,
  reply: FastifyReply,
) => Promise<InteractionPurpose | null>;

/** The Kerberos route's own dependencies; the interaction steps are lent by these routes. */
export type KerberosSignIn = Omit<KerberosSignInOptions<unknown>, 'steps' | 'pageContext'>;

/** The upstream providers' routes' own dependencies; the interaction steps are lent by these routes. */
export type FederationSignIn = Omit<UpstreamSignInOptions<unknown>, 'steps' | 'pageContext' | 'nowSeconds'>;

export interface InteractionRoutesOptions {
  flow: AuthorizationFlow;
  stores: ProtocolStores;
  interactions: InteractionRepository;
  consents: ConsentRepository;
  pageContext: PageContext;
  nowSeconds: () => number;
  loginAttemptGuard?: LoginAttemptGuard;
  /** Device verification (src/routes/device.ts); without it, device interactions are refused. */
  resolveDevicePurpose?: DevicePurposeResolver;
  /** Kerberos single sign-on (./kerberos.ts); without it the login page has no link. */
  kerberos?: KerberosSignIn;
  /** Upstream OpenID providers (./upstream.ts): one login button each. */
  federation?: FederationSignIn;
  /** Authenticator apps: the otp and enrol pages. */
  totp: TotpRepository;
  /** Recovery codes: the recovery page, and the set shown after the first enrolment. */
  recoveryCodes: RecoveryCodeRepository;
  /** Passkeys (./passkey.ts): sign-in alone or as the second factor, enrolment when required. */
  passkeys: PasskeyRepository;
  webauthnChallenges: WebAuthnChallengeStore;
  relyingParty: RelyingParty;
}

/**
 * The first-factor sign-in methods of the login step (oauth-core `AUTHENTICATION_METHODS` says
 * what each contributes to `amr` and `acr`; README "Kerberos").
 */
export type SignInMethod = Extract<AuthenticationMethod, 'password' | 'kerberos' | 'passkey' | 'federated'>;

/** The pages of an interaction, named as in their URL `/interaction/:id/<page>`. */
export type InteractionPage =
  | 'login'
  | 'kerberos'
  | 'otp'
  | 'recovery'
  | 'passkey'
  | 'enrol'
  | 'enrol-passkey'
  | 'continue'
  | 'consent';

/** Tells a locked-out person when to come back (the same time as `Retry-After`). */
export function tooManyAttemptsMessage(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  const wait =
    retryAfterSeconds < 60 ? `${retryAfterSeconds} seconds` : `${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `Too many failed sign-in attempts. Please try again in ${wait}.`;
}

/**
 * Said with a failure that leaves one attempt: a person who mistyped learns before the lock, not
 * after. Counted per username whether or not it exists, so it tells nothing about accounts.
 */
export function lastAttemptWarning(decision: LoginAttemptDecision): string | undefined {
  if (!decision.allowed || decision.remaining !== 1 || decision.lockSeconds === undefined) return undefined;
  return `1 attempt left before a ${Math.ceil(decision.lockSeconds / 60)}-minute lock.`;
}

/** Same text for an unknown user and a wrong password, so the page does not reveal which usernames exist. */
export const INVALID_CREDENTIALS_MESSAGE = 'Invalid username or password.';

/** Same text for a wrong code and a used one: the page does not help guessing. */
export const INVALID_CODE_MESSAGE = 'That code is not valid. Enter the current code from your app.';
