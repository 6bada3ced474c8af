import type { AuditEvent, AuditFields } from '../audit.js';

/**
 * Who makes an operator's change, named in its audit event (`actor`): the admin's `sub` (the
 * console, or a user's access token for the admin API) or the `client_id` of an automation's
 * client credentials token; `ip` is where the request came from.
 */
export interface AdminActor {
  actor: string;
  ip?: string;
}

/** Writes one audit event of an operator's change (the log line, and wherever audit events are kept). */
export type AdminAuditRecorder = (event: AuditEvent, fields: AuditFields) => void | Promise<void>;

/** The fields every operator's change carries: the actor and where the request came from. */
export function actorFields(by: AdminActor): AuditFields {
  return { actor: by.actor, ...(by.ip === undefined ? {} : { ip: by.ip }) };
}
