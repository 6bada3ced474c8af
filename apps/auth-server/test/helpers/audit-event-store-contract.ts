import { describe, expect, it } from 'vitest';
import {
  type AuditEventRecord,
  type AuditEventStore,
  InvalidAuditCursorError,
  MAX_AUDIT_PAGE_SIZE,
} from '../../src/audit/audit-event-store.js';
import { deleteExpiredAuditEvents } from '../../src/audit/audit-retention.js';

/**
 * The contract of an AuditEventStore (src/audit/audit-event-store.ts), for every implementation:
 * pages newest first that continue from a cursor, filters, every column read back, and retention.
 * `fresh` gives an empty store whose retention deletes in batches of three (or does not batch).
 */
/** One event as the app records it; `overrides` change members. */
export function auditEventRecord(time: number, overrides: Partial<AuditEventRecord> = {}): AuditEventRecord {
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

export function describeAuditEventStoreContract(name: string, fresh: () => Promise<AuditEventStore>) {
  let store: AuditEventStore;
  const withStore = (test: () => Promise<void>) => async () => {
    store = await fresh();
    await test();
  };

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

  describe(`audit event store contract: ${name}`, () => {
    it(
      'answers newest first, in pages that continue where the last one ended',
      withStore(async () => {
        await store.record([1000, 1001, 1002, 1003, 1004].map((time) => auditEventRecord(time)));
        expect(await allPages({ limit: 2 })).toEqual([[1004, 1003], [1002, 1001], [1000]]);
      }),
    );

    it(
      'orders events of the same second by the order they were written',
      withStore(async () => {
        await store.record([
          auditEventRecord(2000, { event: 'auth.login.failed' }),
          auditEventRecord(2000, { event: 'auth.login.succeeded' }),
        ]);
        const first = await store.query({ limit: 1 });
        expect(first.events.map((stored) => stored.event)).toEqual(['auth.login.succeeded']);
        const second = await store.query({ limit: 1, cursor: first.nextCursor as string });
        expect(second.events.map((stored) => stored.event)).toEqual(['auth.login.failed']);
        expect(second.nextCursor).toBeUndefined();
      }),
    );

    it(
      'keeps a page stable when newer events arrive between pages',
      withStore(async () => {
        await store.record([3000, 3001, 3002].map((time) => auditEventRecord(time)));
        const first = await store.query({ limit: 2 });
        await store.record([auditEventRecord(3003)]);
        const second = await store.query({ limit: 2, cursor: first.nextCursor as string });
        expect(second.events.map((stored) => stored.time)).toEqual([3000]);
      }),
    );

    it(
      'filters by subject, client, event name and time, all at once',
      withStore(async () => {
        await store.record([
          auditEventRecord(4000),
          auditEventRecord(4001, { sub: 'u-bob' }),
          auditEventRecord(4002, { clientId: 'spa' }),
          auditEventRecord(4003, { event: 'auth.login.failed', outcome: 'failure' }),
          auditEventRecord(4004),
          auditEventRecord(4010),
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
      }),
    );

    it(
      'reads back every column as written',
      withStore(async () => {
        const written = auditEventRecord(5000, {
          actor: 'u-admin',
          ip: null,
          outcome: 'failure',
          details: { reason: 'invalid', count: 2 },
        });
        await store.record([written]);
        const [stored] = (await store.query({ limit: 1 })).events;
        expect(stored).toEqual({ ...written, id: expect.any(Number) });
      }),
    );

    it(
      'refuses a cursor it did not hand out, and a page size out of range',
      withStore(async () => {
        await expect(store.query({ limit: 5, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toBeInstanceOf(
          InvalidAuditCursorError,
        );
        await expect(store.query({ limit: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(store.query({ limit: MAX_AUDIT_PAGE_SIZE + 1 })).rejects.toBeInstanceOf(RangeError);
      }),
    );

    it(
      'retention deletes the events older than the retention period, batch after batch',
      withStore(async () => {
        const day = 86_400;
        const now = 100 * day;
        // Ten expired rows: more than three batches of three (the store's batch size here).
        const expired = Array.from({ length: 10 }, (_, index) => auditEventRecord(now - 91 * day - index));
        await store.record([...expired, auditEventRecord(now - 89 * day), auditEventRecord(now)]);
        expect(await deleteExpiredAuditEvents(store, now, 90)).toBe(10);
        expect((await store.query({ limit: 50 })).events.map((stored) => stored.time)).toEqual([
          now,
          now - 89 * day,
        ]);
      }),
    );
  });
}
