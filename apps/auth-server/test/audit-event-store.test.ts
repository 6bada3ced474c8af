import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEventStore } from '../src/audit/audit-event-store.js';
import { createAuditEventWriter } from '../src/audit/audit-event-writer.js';
import { createDrizzleAuditEventStore } from '../src/audit/drizzle-audit-event-store.js';
import { createMemoryAuditEventStore } from '../src/audit/memory-audit-event-store.js';
import { auditEventsDropped } from '../src/metrics.js';
import {
  describeAuditEventStoreContract,
  auditEventRecord as event,
} from './helpers/audit-event-store-contract.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';

/**
 * The stored audit events (src/audit/): the store contract on the Drizzle store (retention in
 * batches of three here) and on its in-memory twin, and the writer that keeps a request
 * independent of the audit table.
 */

let database: TestDatabase;
let store: AuditEventStore;

beforeAll(async () => {
  database = await createTestDatabase();
  store = createDrizzleAuditEventStore(database.handle.db, { deleteBatchSize: 3 });
});
afterAll(async () => {
  await database?.drop();
});
beforeEach(async () => {
  await database.handle.db.execute(sql`delete from audit_events`);
});

describeAuditEventStoreContract(`drizzle on ${databaseKind}`, async () => {
  await database.handle.db.execute(sql`delete from audit_events`);
  return store;
});
describeAuditEventStoreContract('in memory', async () => createMemoryAuditEventStore());

describe('audit retention on the database', () => {
  it('two instances deleting at once delete each expired row once and wait for nothing', async () => {
    await store.record(Array.from({ length: 20 }, (_, index) => event(1000 + index)));
    await store.record([event(5000)]);
    // Batches of three: the two passes interleave, each skipping the rows the other has locked.
    const deleted = await Promise.all([store.deleteOlderThan(2000), store.deleteOlderThan(2000)]);
    expect(deleted[0] + deleted[1]).toBe(20);
    expect((await store.query({ limit: 50 })).events.map((stored) => stored.time)).toEqual([5000]);
  });
});

describe('audit event writer', () => {
  it('writes queued events in batches and on flush', async () => {
    const writer = createAuditEventWriter(store, { batchSize: 2, flushIntervalMs: 60_000 });
    for (const time of [6000, 6001, 6002]) writer.enqueue(event(time));
    await writer.flush();
    expect(writer.queued).toBe(0);
    expect((await store.query({ limit: 10 })).events.map((stored) => stored.time)).toEqual([
      6002, 6001, 6000,
    ]);
    await writer.close();
  });

  it('keeps events through a store outage and writes them when it is back', async () => {
    const writer = createAuditEventWriter(store, { flushIntervalMs: 60_000 });
    await database.handle.db.execute(sql`alter table audit_events rename to audit_events_away`);
    try {
      writer.enqueue(event(7000));
      await writer.flush();
      expect(writer.queued).toBe(1);
    } finally {
      await database.handle.db.execute(sql`alter table audit_events_away rename to audit_events`);
    }
    await writer.flush();
    expect(writer.queued).toBe(0);
    expect((await store.query({ limit: 10 })).events.map((stored) => stored.time)).toEqual([7000]);
    await writer.close();
  });

  it('counts the events it gives up: beyond its queue during an outage, and unwritten at close', async () => {
    const failing: AuditEventStore = { ...store, record: () => Promise.reject(new Error('database down')) };
    const writer = createAuditEventWriter(failing, { maxQueued: 3, flushIntervalMs: 60_000 });
    const droppedBefore = (await auditEventsDropped.get()).values[0]?.value ?? 0;
    for (const time of [8000, 8001, 8002, 8003, 8004]) writer.enqueue(event(time));
    expect(writer.queued).toBe(3);
    await writer.close();
    expect(writer.queued).toBe(0);
    writer.enqueue(event(8005));
    expect((await auditEventsDropped.get()).values[0]?.value).toBe(droppedBefore + 6);
  });
});
