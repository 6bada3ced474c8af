import type { FastifyBaseLogger } from 'fastify';

/**
 * Security events, written as ordinary pino lines at `info` with a stable `event` field (and
 * `audit: true`), so a log pipeline can route or alert on them by name. The names are part of the
 * operator interface (root README, "Security and operations"): renaming one is a breaking change.
 */
export const AUDIT_EVENTS = {
  /** A person signed in: a correct password or a Kerberos ticket (`sub`, `client_id`, `ip`, `method`). */
  loginSucceeded: 'auth.login.succeeded',
  /**
   * Wrong password or unknown user (`reason`, `sub` when the user exists, `client_id`, `ip`); for
   * Kerberos (`method: kerberos`) a rejected ticket, or a valid one whose `kerberos_principal` has no user.
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
} as const;

export type AuditEvent = (typeof AUDIT_EVENTS)[keyof typeof AUDIT_EVENTS];

/**
 * What an audit line may carry. Deliberately a closed list of identifiers: no field can hold a
 * password, secret, code or token, and the typed username is never logged (people type passwords
 * into the username field).
 */
export interface AuditFields {
  sub?: string;
  client_id?: string;
  ip?: string;
  sid?: string;
  grant_id?: string;
  grant_type?: string;
  scopes?: string[];
  reason?: string;
  /** How the person signed in (or tried to). */
  method?: 'password' | 'kerberos';
  /** The client principal of a valid ticket (an identifier, like `sub`). */
  kerberos_principal?: string;
  limit?: 'login_username' | 'login_ip' | 'token_client' | 'device_user_code';
  retry_after_seconds?: number;
  token_type_hint?: string;
  added?: string[];
  retired?: string[];
  deleted?: string[];
}

/** Writes one security event through the request's (or the app's) logger. */
export function audit(log: FastifyBaseLogger, event: AuditEvent, fields: AuditFields = {}): void {
  log.info({ ...fields, event, audit: true }, event);
}

/**
 * The same line for programs without a Fastify logger (the `keys` operator command): pino's JSON
 * shape (`level` 30 = info, `time` in ms), so one log pipeline reads both.
 */
export function auditLine(event: AuditEvent, fields: AuditFields = {}, nowMs = Date.now()): string {
  return `${JSON.stringify({ level: 30, time: nowMs, ...fields, event, audit: true, msg: event })}\n`;
}
