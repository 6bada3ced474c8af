import { and, desc, eq, gte, inArray, lt, type SQL, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { auditEvents } from '../db/schema.js';
import {
  type AuditEventFilter,
  type AuditEventPage,
  type AuditEventStore,
  checkAuditPageSize,
  decodeAuditCursor,
  encodeAuditCursor,
  type StoredAuditEvent,
} from './audit-event-store.js';

/** Rows one retention `DELETE` removes: short statements, short locks, bounded WAL per statement. */
export const AUDIT_DELETE_BATCH_SIZE = 5_000;

/** AuditEventStore on the `audit_events` table (src/db/schema.ts, section 10). */
export function createDrizzleAuditEventStore(
  db: AppDatabase,
  options: { deleteBatchSize?: number } = {},
): AuditEventStore {
  const deleteBatchSize = options.deleteBatchSize ?? AUDIT_DELETE_BATCH_SIZE;
  return {
    async record(events) {
      if (events.length === 0) return;
      await db.insert(auditEvents).values([...events]);
    },
    query: (filter) => queryAuditEvents(db, filter),
    async deleteOlderThan(time) {
      let deleted = 0;
      for (;;) {
        const batch = await deleteOneBatch(db, time, deleteBatchSize);
        deleted += batch;
        if (batch < deleteBatchSize) return deleted;
      }
    },
  };
}

/**
 * The statement of one page (exported for bench/src/audit-query.ts, which EXPLAINs it): one row
 * more than asked, which says whether another page follows.
 */
export function auditEventPageStatement(db: AppDatabase, filter: AuditEventFilter) {
  checkAuditPageSize(filter.limit);
  return db
    .select()
    .from(auditEvents)
    .where(and(...filterConditions(filter)))
    .orderBy(desc(auditEvents.time), desc(auditEvents.id))
    .limit(filter.limit + 1);
}

async function queryAuditEvents(db: AppDatabase, filter: AuditEventFilter): Promise<AuditEventPage> {
  const rows: StoredAuditEvent[] = await auditEventPageStatement(db, filter);
  const events = rows.slice(0, filter.limit);
  const last = events.at(-1);
  return rows.length > filter.limit && last
    ? { events, nextCursor: encodeAuditCursor({ time: last.time, id: last.id }) }
    : { events };
}

/**
 * Each filter an equality on the leading column of its index; the cursor a row comparison on the
 * index's last two columns, which PostgreSQL answers as one index range (keyset pagination).
 */
function filterConditions(filter: AuditEventFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.sub !== undefined) conditions.push(eq(auditEvents.sub, filter.sub));
  if (filter.clientId !== undefined) conditions.push(eq(auditEvents.clientId, filter.clientId));
  if (filter.event !== undefined) conditions.push(eq(auditEvents.event, filter.event));
  if (filter.since !== undefined) conditions.push(gte(auditEvents.time, filter.since));
  if (filter.until !== undefined) conditions.push(lt(auditEvents.time, filter.until));
  if (filter.cursor !== undefined) {
    const after = decodeAuditCursor(filter.cursor);
    conditions.push(sql`(${auditEvents.time}, ${auditEvents.id}) < (${after.time}, ${after.id})`);
  }
  return conditions;
}

/**
 * One batch of the oldest expired rows. `FOR UPDATE SKIP LOCKED`: instances running the retention
 * job at the same moment take different rows instead of waiting for each other's batch.
 */
async function deleteOneBatch(db: AppDatabase, before: number, batchSize: number): Promise<number> {
  const expired = db
    .select({ id: auditEvents.id })
    .from(auditEvents)
    .where(lt(auditEvents.time, before))
    .orderBy(auditEvents.time)
    .limit(batchSize)
    .for('update', { skipLocked: true });
  const deleted = await db
    .delete(auditEvents)
    .where(inArray(auditEvents.id, expired))
    .returning({ id: auditEvents.id });
  return deleted.length;
}
