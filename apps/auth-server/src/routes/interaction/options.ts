import type { AuthenticationMethod, Client, OAuthError, ProtocolStores } from '@oidc-orders/oauth-core';
import type { FastifyReply } from 'fastify';
import type { AccountStore } from '../../accounts/account-store.js';
import type { MessageKey } from '../../i18n/catalogues/en.js';
import type {
  AuthorizationFlow,
  NextStep,
  SignInRequirements,
} from '../../interaction/authorization-flow.js';
import type { ConsentRepository } from '../../interaction/consent-repository.js';
import type { InteractionRepository } from '../../interaction/interaction-repository.js';
import type { LoginAttemptGuard } from '../../interaction/login-attempts.js';
import type { PasskeyRepository } from '../../mfa/passkey-repository.js';
import type { RecoveryCodeRepository } from '../../mfa/recovery-codes.js';
import type { TotpRepository } from '../../mfa/totp-repository.js';
import type { RelyingParty } from '../../mfa/webauthn.js';
import type { WebAuthnChallengeStore } from '../../mfa/webauthn-challenges.js';
import type { PageContext } from '../authorization-reply.js';
import type { KerberosSignInOptions } from './kerberos.js';
import type { UpstreamSignInOptions } from './upstream.js';

export type {
  LoginAttempt,
  LoginAttemptDecision,
  LoginAttemptGuard,
} from '../../interaction/login-attempts.js';

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
  consentNotice?: MessageKey;
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
  /** Remembers each sign-in's page language with the account, for mails sent later (src/i18n/). */
  accounts: Pick<AccountStore, 'recordLanguage'>;
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
  | 'consent'
  | 'directory-password';

export {
  INVALID_CREDENTIALS_MESSAGE,
  lastAttemptWarning,
  tooManyAttemptsMessage,
} from '../../interaction/login-attempts.js';

/** Same text for a wrong code and a used one: the page does not help guessing. */
export const INVALID_CODE_MESSAGE = 'That code is not valid. Enter the current code from your app.';
