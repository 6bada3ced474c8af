import {
  type AuditEventFilter,
  type AuditEventStore,
  checkAuditPageSize,
  decodeAuditCursor,
  encodeAuditCursor,
  type StoredAuditEvent,
} from './audit-event-store.js';

/**
 * The in-memory twin of the Drizzle store: the same contract (test/helpers/audit-event-store-
 * contract.ts runs against both), for tests of what reads the audit events without a database.
 */
export function createMemoryAuditEventStore(): AuditEventStore {
  const rows: StoredAuditEvent[] = [];
  let nextId = 1;
  return {
    async record(events) {
      for (const event of events) rows.push({ ...event, details: { ...event.details }, id: nextId++ });
    },
    async query(filter) {
      checkAuditPageSize(filter.limit);
      const matching = rows.filter(matches(filter)).sort(newestFirst);
      const events = matching.slice(0, filter.limit).map((row) => ({ ...row, details: { ...row.details } }));
      const last = events.at(-1);
      return matching.length > filter.limit && last
        ? { events, nextCursor: encodeAuditCursor({ time: last.time, id: last.id }) }
        : { events };
    },
    async deleteOlderThan(time) {
      const before = rows.length;
      rows.splice(0, rows.length, ...rows.filter((row) => row.time >= time));
      return before - rows.length;
    },
  };
}

function newestFirst(a: StoredAuditEvent, b: StoredAuditEvent): number {
  return b.time - a.time || b.id - a.id;
}

function matches(filter: AuditEventFilter): (row: StoredAuditEvent) => boolean {
  const after = filter.cursor === undefined ? undefined : decodeAuditCursor(filter.cursor);
  return (row) =>
    (filter.sub === undefined || row.sub === filter.sub) &&
    (filter.clientId === undefined || row.clientId === filter.clientId) &&
    (filter.event === undefined || row.event === filter.event) &&
    (filter.since === undefined || row.time >= filter.since) &&
    (filter.until === undefined || row.time < filter.until) &&
    (after === undefined || row.time < after.time || (row.time === after.time && row.id < after.id));
}
