import type { AuditEventStore } from './audit-event-store.js';

const SECONDS_PER_DAY = 86_400;

/** How often each instance deletes expired audit events (any instance may; they skip each other's rows). */
export const AUDIT_RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/** Deletes the events older than `retentionDays` before `now` (seconds); returns how many. */
export function deleteExpiredAuditEvents(
  store: AuditEventStore,
  now: number,
  retentionDays: number,
): Promise<number> {
  return store.deleteOlderThan(now - retentionDays * SECONDS_PER_DAY);
}
