/**
 * The `DpopReplayStore` contract as a reusable Vitest suite, run by the in-memory twin and by the
 * server's database implementation. Keys are unique per test, so one database may serve all tests.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DpopReplayStore } from './dpop-replay.js';

export interface DpopReplayStoreFixture {
  store: DpopReplayStore;
  close(): Promise<void> | void;
}

const T0 = 1_700_000_000;
let run = 0;

export function describeDpopReplayStoreContract(
  name: string,
  makeStore: () => Promise<DpopReplayStoreFixture> | DpopReplayStoreFixture,
): void {
  describe(`DpopReplayStore contract: ${name}`, () => {
    let fixture: DpopReplayStoreFixture;
    let n = '';
    beforeEach(async () => {
      run += 1;
      n = `${run}-${Math.floor(performance.timeOrigin + performance.now()).toString(36)}`;
      fixture = await makeStore();
    });
    afterEach(async () => {
      await fixture.close();
    });

    it('records a key once: true the first time, false after', async () => {
      const { store } = fixture;
      expect(await store.markUsed(`jti-${n}`, T0 + 60)).toBe(true);
      expect(await store.markUsed(`jti-${n}`, T0 + 60)).toBe(false);
      expect(await store.markUsed(`jti-${n}`, T0 + 600)).toBe(false);
      expect(await store.markUsed(`other-${n}`, T0 + 60)).toBe(true);
    });

    it('is case-sensitive', async () => {
      const { store } = fixture;
      expect(await store.markUsed(`Jti-${n}`, T0 + 60)).toBe(true);
      expect(await store.markUsed(`jti-${n}`, T0 + 60)).toBe(true);
    });

    it('gives exactly one true out of 10 concurrent calls with the same key', async () => {
      const { store } = fixture;
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store.markUsed(`race-${n}`, T0 + 60)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('deletes entries whose expiry has passed and keeps the others', async () => {
      const { store } = fixture;
      // Far in the past, so entries of other tests sharing the database are not affected.
      const past = 1_000_000 + run * 10;
      await store.markUsed(`expired-${n}`, past);
      await store.markUsed(`live-${n}`, T0 + 60);
      expect(await store.deleteExpired(past)).toBeGreaterThanOrEqual(1);
      expect(await store.markUsed(`expired-${n}`, T0 + 60)).toBe(true);
      expect(await store.markUsed(`live-${n}`, T0 + 60)).toBe(false);
    });
  });
}
