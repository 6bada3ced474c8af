import { type AuditEvent, type AuditFields, FAILURE_EVENTS } from '../audit.js';
import { scrubValue } from '../http/log-redaction.js';
import type { AuditEventRecord } from './audit-event-store.js';

/**
 * The row for one audit event: the identifiers the console filters by get their own columns, the
 * other fields go to `details`. Everything passes the log lines' redaction first (src/http/
 * log-redaction.ts): a field that looks like a secret (`password=…`, a JWT) is stored as
 * `[redacted]`, exactly as the log line shows it.
 */
export function toAuditEventRecord(event: AuditEvent, fields: AuditFields, time: number): AuditEventRecord {
  const { sub, client_id, ip, actor, ...details } = scrubValue(fields) as AuditFields;
  return {
    time,
    event,
    sub: sub ?? null,
    clientId: client_id ?? null,
    ip: ip ?? null,
    actor: actor ?? null,
    outcome: FAILURE_EVENTS.has(event) ? 'failure' : 'success',
    details,
  };
}
