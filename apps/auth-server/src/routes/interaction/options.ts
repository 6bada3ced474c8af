import type { AuthenticationMethod, Client, OAuthError, ProtocolStores } from '@oidc-orders/oauth-core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountStore } from '../../accounts/account-store.js';
import type { StartedAuthorization } from '../../federation/authorizations.js';
import type { UpstreamProvider } from '../../federation/registry.js';
import type { redeemUpstreamCode } from '../../federation/upstream-code-flow.js';
import type { MessageKey } from '../../i18n/catalogues/en.js';
import type {
  AuthorizationFlow,
  NextStep,
  SignInRequirements,
} from '../../interaction/authorization-flow.js';
import type { InteractionRepository } from '../../interaction/interaction-repository.js';
import type { LoginAttemptGuard } from '../../interaction/login-attempts.js';
import type { PasskeyRepository } from '../../mfa/passkey-repository.js';
import type { RecoveryCodeRepository } from '../../mfa/recovery-codes.js';
import type { TotpRepository } from '../../mfa/totp-repository.js';
import type { RelyingParty } from '../../mfa/webauthn.js';
import type { WebAuthnChallengeStore } from '../../mfa/webauthn-challenges.js';
import type { PageContext } from '../authorization-reply.js';

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

/**
 * The return of an `account_link` authorization at the provider's callback: it names no
 * interaction, so the account area's own checks (browser, session, user) run in `finish`;
 * `redeem` exchanges the code exactly as a sign-in does (and throws when that fails).
 */
export type AccountLinkFinisher = (
  request: FastifyRequest<{ Params: { provider: string }; Querystring: Record<string, string> }>,
  reply: FastifyReply,
  returned: {
    provider: UpstreamProvider;
    started: StartedAuthorization;
    redeem: () => ReturnType<typeof redeemUpstreamCode>;
  },
) => Promise<FastifyReply>;

export interface InteractionRoutesOptions {
  flow: AuthorizationFlow;
  stores: ProtocolStores;
  interactions: InteractionRepository;
  pageContext: PageContext;
  nowSeconds: () => number;
  /** Remembers each sign-in's page language with the account, for mails sent later (src/i18n/). */
  accounts: Pick<AccountStore, 'recordLanguage'>;
  loginAttemptGuard?: LoginAttemptGuard;
  /** Device verification (src/routes/device.ts); without it, device interactions are refused. */
  resolveDevicePurpose?: DevicePurposeResolver;
  /** Finishes a link started on the account page at an upstream provider's callback (./upstream.ts). */
  finishAccountLink?: AccountLinkFinisher;
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
 * The first factors a session can start with (oauth-core `AUTHENTICATION_METHODS` says what each
 * contributes to `amr` and `acr`); the ways in that produce them are ./methods/.
 */
export type FirstFactorMethod = Extract<
  AuthenticationMethod,
  'password' | 'kerberos' | 'passkey' | 'federated'
>;

/** The pages of an interaction, named as in their URL `/interaction/:id/<page>` (src/endpoints.ts). */
export type { InteractionPage } from '../../endpoints.js';

export {
  INVALID_CREDENTIALS_MESSAGE,
  lastAttemptWarning,
  tooManyAttemptsMessage,
} from '../../interaction/login-attempts.js';

/** Same text for a wrong code and a used one: the page does not help guessing. */
export const INVALID_CODE_MESSAGE = 'That code is not valid. Enter the current code from your app.';
