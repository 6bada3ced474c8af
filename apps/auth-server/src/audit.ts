import type { FastifyBaseLogger } from 'fastify';
import { auditEventsCounted, rateLimitRefusals } from './metrics.js';

/**
 * Security events, written as ordinary pino lines at `info` with a stable `event` field (and
 * `audit: true`), so a log pipeline can route or alert on them by name. The names are part of the
 * operator interface (docs/security-and-operations.md, "Audit events"): renaming one is a breaking
 * change. Each event is also stored in the database (src/audit/), where the console, the admin API
 * and the account page read it.
 */
export const AUDIT_EVENTS = {
  /**
   * A person signed in: a correct password, a Kerberos ticket or a passkey alone (`sub`,
   * `client_id`, `ip`, `method`; `credential_id` for a passkey).
   */
  loginSucceeded: 'auth.login.succeeded',
  /**
   * Wrong password or unknown user (`reason`, `sub` when the user exists, `client_id`, `ip`); for
   * Kerberos (`method: kerberos`) a rejected ticket, or a valid one whose `kerberos_principal` has no user;
   * for a passkey (`method: passkey`) an assertion refused (`reason` as for `factorFailed`).
   */
  loginFailed: 'auth.login.failed',
  /** Consent approved on the consent page (`sub`, `client_id`, `scopes`). */
  consentGranted: 'auth.consent.granted',
  /** Consent denied (`sub`, `client_id`). */
  consentDenied: 'auth.consent.denied',
  /** A used code or rotated refresh token came back: the whole grant was revoked (`grant_id`, `grant_type`, `client_id`). */
  tokenReuseDetected: 'auth.token.reuse_detected',
  /** RFC 7009 revocation request accepted (`client_id`, `token_type_hint`). */
  tokenRevoked: 'auth.token.revoked',
  /** RP-initiated logout ended an SSO session (`sub`, `sid`, `client_id`). */
  logout: 'auth.logout',
  /** `keys rotate` added and retired signing keys (`added`, `retired`, `deleted` kids). */
  keysRotated: 'auth.keys.rotated',
  /** A rate limit refused a request (`limit`, `ip` or `client_id`, `retry_after_seconds`). */
  rateLimitExceeded: 'auth.rate_limit.exceeded',
  /** A second factor was accepted (`sub`, `method`, `client_id`, `ip`; `remaining` for recovery codes). */
  factorSucceeded: 'auth.mfa.succeeded',
  /**
   * A second factor was refused (`sub`, `method`, `reason`: `invalid` | `replayed`; for a passkey
   * `unknown_credential` | `wrong_user` | `invalid` | `counter` | `malformed`, `client_id`, `ip`).
   */
  factorFailed: 'auth.mfa.failed',
  /** A factor was enrolled (`sub`, `method`, `credential_id`). */
  factorEnrolled: 'auth.mfa.enrolled',
  /** A factor was removed by its user (`sub`, `method`, `credential_id`). */
  factorRemoved: 'auth.mfa.removed',
  /** A new set of recovery codes was issued (`sub`); the old set stops working. */
  recoveryCodesIssued: 'auth.mfa.recovery_codes_issued',
  /** The account page changed the password (`sub`). */
  passwordChanged: 'auth.account.password_changed',
  /** The account page refused a password change (`sub`, `reason`). */
  passwordChangeFailed: 'auth.account.password_change_failed',
  /** "Remove access" on the account page (`sub`, `client_id`, `count` grants revoked). */
  appAccessRevoked: 'auth.account.app_access_revoked',
  /** "Sign out other sessions" on the account page (`sub`, `sid` kept, `count` ended). */
  otherSessionsEnded: 'auth.account.other_sessions_ended',
  /** The account page linked an upstream provider: its sign-in now enters this account (`sub`, `method`: `idp:<id>`). */
  identityLinked: 'auth.account.identity_linked',
  /** The account page unlinked an upstream provider (`sub`, `method`: `idp:<id>`). */
  identityUnlinked: 'auth.account.identity_unlinked',
  /** `users add` created a user (`sub`). */
  adminUserAdded: 'auth.admin.user_added',
  /** `users disable` (`sub`): sign-in refused, sessions and tokens ended. */
  adminUserDisabled: 'auth.admin.user_disabled',
  /** `users enable` (`sub`). */
  adminUserEnabled: 'auth.admin.user_enabled',
  /** `users reset-password` (`sub`): new password, sessions and tokens ended. */
  adminPasswordReset: 'auth.admin.password_reset',
  /** `users reset-mfa` (`sub`, `count` authenticator apps and passkeys removed): factors and recovery codes removed. */
  adminMfaReset: 'auth.admin.mfa_reset',
  /**
   * An operator ended every session of a user through the admin API or console (`sub`, `actor`,
   * `count` sessions): their relying parties were told over the back channel.
   */
  adminSessionsEnded: 'auth.admin.sessions_ended',
  /** An operator ended one SSO session (`sub`, `sid`, `actor`). */
  adminSessionRevoked: 'auth.admin.session_revoked',
  /** An operator revoked one grant (`sub`, `client_id`, `grant_id`, `actor`). */
  adminGrantRevoked: 'auth.admin.grant_revoked',
  /** An operator had a password reset link mailed to a user (`sub`, `actor`). */
  adminResetMailSent: 'auth.admin.reset_mail_sent',
  /** A signed-in person who is not in the seed's `admins` asked for the operator console (`sub`, `ip`). */
  adminConsoleRefused: 'auth.admin.console_refused',
  /** A factor was renamed (`sub`, `method`, `credential_id`). */
  factorRenamed: 'auth.mfa.renamed',
  /**
   * A directory user's entry was gone or disabled at a refresh (`sub`, `client_id`): their grants
   * were revoked and their sessions ended.
   */
  directoryAccountEnded: 'auth.directory.account_ended',
  /** A client registered itself (RFC 7591; `client_id`, `ip`). */
  clientRegistered: 'auth.client.registered',
  /** A registration was refused (`reason`: the RFC 7591 error code, `ip`). */
  clientRegistrationRefused: 'auth.client.registration_refused',
  /** A registered client changed its metadata (RFC 7592 §2.2; `client_id`). */
  clientRegistrationUpdated: 'auth.client.registration_updated',
  /** A registered client was deleted: by itself (RFC 7592 §2.3), by `clients delete`, or unused (`client_id`, `reason`). */
  clientDeleted: 'auth.client.deleted',
  /** A directory password was changed at the sign-in's change-password step (`sub` when known). */
  directoryPasswordChanged: 'auth.directory.password_changed',
} as const;

export type AuditEvent = (typeof AUDIT_EVENTS)[keyof typeof AUDIT_EVENTS];

/**
 * The events that record a refusal or a failure (stored with `outcome: 'failure'`); every other
 * event records something done as asked. A denied consent is the user's choice, not a failure.
 */
export const FAILURE_EVENTS: ReadonlySet<AuditEvent> = new Set([
  AUDIT_EVENTS.loginFailed,
  AUDIT_EVENTS.tokenReuseDetected,
  AUDIT_EVENTS.rateLimitExceeded,
  AUDIT_EVENTS.factorFailed,
  AUDIT_EVENTS.passwordChangeFailed,
  AUDIT_EVENTS.clientRegistrationRefused,
]);

/**
 * What an audit line may carry. Deliberately a closed list of identifiers: no field can hold a
 * password, secret, code or token, and the typed username is never logged (people type passwords
 * into the username field).
 */
export interface AuditFields {
  sub?: string;
  /**
   * Who made an operator's change: the admin's `sub` (console, or a user's token for the admin
   * API) or the `client_id` of an automation's client credentials token.
   */
  actor?: string;
  client_id?: string;
  ip?: string;
  sid?: string;
  grant_id?: string;
  grant_type?: string;
  scopes?: string[];
  reason?: string;
  limit?:
    | 'login_username'
    | 'login_ip'
    | 'token_client'
    | 'device_user_code'
    | 'mfa_user'
    | 'mfa_ip'
    | 'registration_ip';
  /** Sign-in method (oauth-core `AuthenticationMethod`). */
  method?: string;
  /** Where the account lives: `ldap` for a directory user (absent for local users). */
  source?: string;
  /** The client principal of a valid Kerberos ticket (an identifier, like `sub`). */
  kerberos_principal?: string;
  /** A factor's id (never its secret). */
  credential_id?: string;
  /** Recovery codes left after one was used. */
  remaining?: number;
  /** How many records an action touched (sessions ended, factors removed). */
  count?: number;
  retry_after_seconds?: number;
  token_type_hint?: string;
  added?: string[];
  retired?: string[];
  deleted?: string[];
}

/**
 * Writes one security event through the request's (or the app's) logger, and hands it to the
 * app's audit event sink (`attachAuditSink` below), which stores it without delaying the request.
 */
export function audit(log: FastifyBaseLogger, event: AuditEvent, fields: AuditFields = {}): void {
  auditEventsCounted.inc({ event });
  if (event === AUDIT_EVENTS.rateLimitExceeded && fields.limit)
    rateLimitRefusals.inc({ limit: fields.limit });
  log.info({ ...fields, event, audit: true }, event);
  auditSinkOf(log)?.(event, fields);
}

/**
 * The same line for programs without a Fastify logger (the `keys` operator command): pino's JSON
 * shape (`level` 30 = info, `time` in ms), so one log pipeline reads both.
 */
export function auditLine(event: AuditEvent, fields: AuditFields = {}, nowMs = Date.now()): string {
  return `${JSON.stringify({ level: 30, time: nowMs, ...fields, event, audit: true, msg: event })}\n`;
}

/** Receives every audit event of an app as it is written (src/plugins/audit-events.ts stores them). */
export type AuditSink = (event: AuditEvent, fields: AuditFields) => void;

const AUDIT_SINK = Symbol('auditSink');

type LoggerWithSink = FastifyBaseLogger & { [AUDIT_SINK]?: AuditSink };

/**
 * The sink rides on the app's logger: every event site already passes a logger to `audit()` (the
 * request's, or the app's), and a pino child logger (each request's) inherits its parent's
 * properties through its prototype, so every event of this app reaches the sink while another app
 * in the same process (tests) keeps its own. The app's logger is a pino instance even when logging
 * is off (src/app.ts), never Fastify's shared no-op logger.
 */
export function attachAuditSink(log: FastifyBaseLogger, sink: AuditSink): void {
  (log as LoggerWithSink)[AUDIT_SINK] = sink;
}

export function auditSinkOf(log: FastifyBaseLogger): AuditSink | undefined {
  return (log as LoggerWithSink)[AUDIT_SINK];
}
