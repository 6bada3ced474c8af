import type { FastifyBaseLogger } from 'fastify';
import { auditEventsCounted } from './metrics.js';

/**
 * Security events of the orders service, written as ordinary pino lines at `info` with a stable
 * `event` field (and `audit: true`). The names are part of the operator interface
 * (docs/security-and-operations.md, "Audit events"): renaming one is a breaking change.
 */
export const AUDIT_EVENTS = {
  /** A sign-in callback created a session (`sub`, `sid`). */
  signInSucceeded: 'orders.signin.succeeded',
  /** A sign-in callback was refused (`reason`). */
  signInFailed: 'orders.signin.failed',
  /** `GET /logout` or `POST /logout` ended the browser's session (`sub` when there was one). */
  logout: 'orders.logout',
  /** `POST /logout` without the session's CSRF token: nothing ended (`reason`). */
  logoutRefused: 'orders.logout.refused',
  /** A valid back-channel logout token ended sessions (`sub`, `sid`, `sessions`). */
  backchannelLogout: 'orders.backchannel_logout',
  /** A back-channel logout token was refused (`reason`). */
  backchannelLogoutRejected: 'orders.backchannel_logout.rejected',
  /** `x-api-key` missing or wrong on an API-key route (`reason`, `ip`). */
  apiKeyRejected: 'orders.api_key.rejected',
} as const;

export type AuditEvent = (typeof AUDIT_EVENTS)[keyof typeof AUDIT_EVENTS];

/** A closed list of identifiers: no field can carry a key, cookie, code or token. */
export interface AuditFields {
  sub?: string;
  sid?: string;
  ip?: string;
  reason?: string;
  sessions?: number;
}

/** Writes one security event; `message` is the human text of the line (default: the event name). */
export function audit(
  log: FastifyBaseLogger,
  event: AuditEvent,
  fields: AuditFields = {},
  message: string = event,
): void {
  auditEventsCounted.inc({ event });
  log.info({ ...fields, event, audit: true }, message);
}
