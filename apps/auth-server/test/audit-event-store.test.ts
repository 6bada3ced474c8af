import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AuditEventRecord,
  type AuditEventStore,
  InvalidAuditCursorError,
  MAX_AUDIT_PAGE_SIZE,
} from '../src/audit/audit-event-store.js';
import { createAuditEventWriter } from '../src/audit/audit-event-writer.js';
import { deleteExpiredAuditEvents } from '../src/audit/audit-retention.js';
import { createDrizzleAuditEventStore } from '../src/audit/drizzle-audit-event-store.js';
import { auditEventsDropped } from '../src/metrics.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/**
 * The stored audit events (src/audit/): one page newest first with filters and a cursor, retention
 * in batches, and the writer that keeps a request independent of the audit table.
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

function event(time: number, overrides: Partial<AuditEventRecord> = {}): AuditEventRecord {
  return {
    time,
    event: 'auth.login.succeeded',
    sub: 'u-alice',
    clientId: 'web',
    ip: '192.0.2.1',
    actor: null,
    outcome: 'success',
    details: { method: 'pwd' },
    ...overrides,
  };
}

async function allPages(filter: { sub?: string; limit: number }): Promise<number[][]> {
  const pages: number[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.query({ ...filter, ...(cursor ? { cursor } : {}) });
    pages.push(page.events.map((stored) => stored.time));
    cursor = page.nextCursor;
  } while (cursor);
  return pages;
}

describe('audit event store', () => {
  it('answers newest first, in pages that continue where the last one ended', async () => {
    await store.record([1000, 1001, 1002, 1003, 1004].map((time) => event(time)));
    expect(await allPages({ limit: 2 })).toEqual([[1004, 1003], [1002, 1001], [1000]]);
  });

  it('orders events of the same second by the order they were written', async () => {
    await store.record([
      event(2000, { event: 'auth.login.failed' }),
      event(2000, { event: 'auth.login.succeeded' }),
    ]);
    const first = await store.query({ limit: 1 });
    expect(first.events.map((stored) => stored.event)).toEqual(['auth.login.succeeded']);
    const second = await store.query({ limit: 1, cursor: first.nextCursor as string });
    expect(second.events.map((stored) => stored.event)).toEqual(['auth.login.failed']);
    expect(second.nextCursor).toBeUndefined();
  });

  it('keeps a page stable when newer events arrive between pages', async () => {
    await store.record([3000, 3001, 3002].map((time) => event(time)));
    const first = await store.query({ limit: 2 });
    await store.record([event(3003)]);
    const second = await store.query({ limit: 2, cursor: first.nextCursor as string });
    expect(second.events.map((stored) => stored.time)).toEqual([3000]);
  });

  it('filters by subject, client, event name and time, all at once', async () => {
    await store.record([
      event(4000),
      event(4001, { sub: 'u-bob' }),
      event(4002, { clientId: 'spa' }),
      event(4003, { event: 'auth.login.failed', outcome: 'failure' }),
      event(4004),
      event(4010),
    ]);
    const times = async (filter: Parameters<AuditEventStore['query']>[0]) =>
      (await store.query(filter)).events.map((stored) => stored.time);
    expect(await times({ sub: 'u-bob', limit: 10 })).toEqual([4001]);
    expect(await times({ clientId: 'spa', limit: 10 })).toEqual([4002]);
    expect(await times({ event: 'auth.login.failed', limit: 10 })).toEqual([4003]);
    expect(await times({ since: 4001, until: 4004, limit: 10 })).toEqual([4003, 4002, 4001]);
    expect(
      await times({
        sub: 'u-alice',
        clientId: 'web',
        event: 'auth.login.succeeded',
        since: 4000,
        until: 4010,
        limit: 10,
      }),
    ).toEqual([4004, 4000]);
  });

  it('reads back every column as written', async () => {
    const written = event(5000, {
      actor: 'u-admin',
      ip: null,
      outcome: 'failure',
      details: { reason: 'invalid', count: 2 },
    });
    await store.record([written]);
    const [stored] = (await store.query({ limit: 1 })).events;
    expect(stored).toEqual({ ...written, id: expect.any(Number) });
  });

  it('refuses a cursor it did not hand out, and a page size out of range', async () => {
    await expect(store.query({ limit: 5, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toBeInstanceOf(
      InvalidAuditCursorError,
    );
    await expect(store.query({ limit: 0 })).rejects.toBeInstanceOf(RangeError);
    await expect(store.query({ limit: MAX_AUDIT_PAGE_SIZE + 1 })).rejects.toBeInstanceOf(RangeError);
  });

  it('retention deletes the events older than the retention period, batch after batch', async () => {
    const day = 86_400;
    const now = 100 * day;
    // Ten expired rows: more than three batches of three (the store's batch size here).
    const expired = Array.from({ length: 10 }, (_, index) => event(now - 91 * day - index));
    await store.record([...expired, event(now - 89 * day), event(now)]);
    expect(await deleteExpiredAuditEvents(store, now, 90)).toBe(10);
    expect((await store.query({ limit: 50 })).events.map((stored) => stored.time)).toEqual([
      now,
      now - 89 * day,
    ]);
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
