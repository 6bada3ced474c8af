/**
 * The `DpopReplayStore` contract as a reusable Vitest suite, run by the in-memory twin and by the
 * server's database implementation. Keys are unique per test, so one database may serve all tests.
 */
import { describe, expect, it } from 'vitest';
import type { DpopReplayStore } from '../../src/storage/dpop-replay.js';
import { T0, useFixturePerTest } from './context.js';

export interface DpopReplayStoreFixture {
  store: DpopReplayStore;
  close(): Promise<void> | void;
}

export function describeDpopReplayStoreContract(
  name: string,
  makeStore: () => Promise<DpopReplayStoreFixture> | DpopReplayStoreFixture,
): void {
  describe(`DpopReplayStore contract: ${name}`, () => {
    const t = useFixturePerTest(makeStore);

    it('records a key once: true the first time, false after', async () => {
      const { store } = t.fixture;
      expect(await store.markUsed(`jti-${t.n}`, T0 + 60)).toBe(true);
      expect(await store.markUsed(`jti-${t.n}`, T0 + 60)).toBe(false);
      expect(await store.markUsed(`jti-${t.n}`, T0 + 600)).toBe(false);
      expect(await store.markUsed(`other-${t.n}`, T0 + 60)).toBe(true);
    });

    it('is case-sensitive', async () => {
      const { store } = t.fixture;
      expect(await store.markUsed(`Jti-${t.n}`, T0 + 60)).toBe(true);
      expect(await store.markUsed(`jti-${t.n}`, T0 + 60)).toBe(true);
    });

    it('gives exactly one true out of 10 concurrent calls with the same key', async () => {
      const { store } = t.fixture;
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store.markUsed(`race-${t.n}`, T0 + 60)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('deletes entries whose expiry has passed and keeps the others', async () => {
      const { store } = t.fixture;
      // Far in the past, so entries of other tests sharing the database are not affected.
      const past = 1_000_000 + t.sequence * 10;
      await store.markUsed(`expired-${t.n}`, past);
      await store.markUsed(`live-${t.n}`, T0 + 60);
      expect(await store.deleteExpired(past)).toBeGreaterThanOrEqual(1);
      expect(await store.markUsed(`expired-${t.n}`, T0 + 60)).toBe(true);
      expect(await store.markUsed(`live-${t.n}`, T0 + 60)).toBe(false);
    });
  });
}
