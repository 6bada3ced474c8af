import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseRateLimitStore } from '../src/http/database-rate-limit-store.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const WINDOW = 60_000;

function hit(store: FastifyRateLimitStore, key: string) {
  return new Promise<{ current: number; ttl: number }>((resolve, reject) =>
    store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), WINDOW, 10),
  );
}

describe('database rate-limit store', () => {
  it('counts hits per key in a fixed window and reports the time left', async () => {
    let now = 1_000_000;
    const Store = databaseRateLimitStore(database.handle.db, { nowMs: () => now });
    const store = new Store({});
    expect(await hit(store, 'a')).toEqual({ current: 1, ttl: WINDOW });
    now += 15_000;
    expect(await hit(store, 'a')).toEqual({ current: 2, ttl: WINDOW - 15_000 });
    expect(await hit(store, 'b')).toEqual({ current: 1, ttl: WINDOW });
  });

  it('starts a new window once the previous one ended', async () => {
    let now = 2_000_000;
    const Store = databaseRateLimitStore(database.handle.db, { nowMs: () => now });
    const store = new Store({});
    await hit(store, 'c');
    await hit(store, 'c');
    now += WINDOW;
    expect(await hit(store, 'c')).toEqual({ current: 1, ttl: WINDOW });
  });

  it('is shared: two stores (two server instances) on one database add up', async () => {
    const now = 3_000_000;
    const first = new (databaseRateLimitStore(database.handle.db, { nowMs: () => now }))({});
    const second = new (databaseRateLimitStore(database.handle.db, { nowMs: () => now }))({});
    await hit(first, 'shared');
    await hit(second, 'shared');
    expect((await hit(first.child({} as never), 'shared')).current).toBe(3);
  });

  it('counts every one of concurrent hits (one upsert each, no lost update)', async () => {
    const Store = databaseRateLimitStore(database.handle.db, { nowMs: () => 4_000_000 });
    const store = new Store({});
    const results = await Promise.all(Array.from({ length: 12 }, () => hit(store, 'burst')));
    expect(results.map((result) => result.current).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
  });
});
