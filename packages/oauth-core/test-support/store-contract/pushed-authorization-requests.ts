/**
 * The `PushedAuthorizationRequestStore` contract as a reusable Vitest suite, run by the in-memory
 * twin and by the server's database implementation. Keys are unique per test.
 */
import { describe, expect, it } from 'vitest';
import type {
  PushedAuthorizationRequest,
  PushedAuthorizationRequestStore,
} from '../../src/storage/pushed-authorization-requests.js';
import { T0, useFixturePerTest } from './context.js';

export interface PushedAuthorizationRequestStoreFixture {
  store: PushedAuthorizationRequestStore;
  close(): Promise<void> | void;
}

export function describePushedAuthorizationRequestStoreContract(
  name: string,
  makeStore: () => Promise<PushedAuthorizationRequestStoreFixture> | PushedAuthorizationRequestStoreFixture,
): void {
  describe(`PushedAuthorizationRequestStore contract: ${name}`, () => {
    const t = useFixturePerTest(makeStore);

    const request = (
      suffix = 'p',
      over: Partial<PushedAuthorizationRequest> = {},
    ): PushedAuthorizationRequest => ({
      requestUriHash: `par-${t.n}-${suffix}`,
      clientId: `client-${t.n}`,
      params: {
        client_id: `client-${t.n}`,
        response_type: 'code',
        redirect_uri: 'https://rp.example/cb',
        scope: 'openid orders.read',
        state: 'ü-state with spaces',
      },
      resources: ['https://api-a.example', 'https://api-b.example'],
      createdAt: T0,
      expiresAt: T0 + 60,
      usedAt: null,
      ...over,
    });

    it('round-trips every field, and reads the same request again until it is used', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      const find = (now: number) =>
        store.findPushedAuthorizationRequest(saved.requestUriHash, saved.clientId, now);
      expect(await find(T0 + 1)).toEqual(saved);
      expect(await find(T0 + 2)).toEqual(saved);
      expect(
        await store.markPushedAuthorizationRequestUsed(saved.requestUriHash, saved.clientId, T0 + 3),
      ).toBe(true);
      expect(await find(T0 + 4)).toBeNull();
      expect(
        await store.markPushedAuthorizationRequestUsed(saved.requestUriHash, saved.clientId, T0 + 5),
      ).toBe(false);
    });

    it('refuses another client without spending the request', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      expect(
        await store.findPushedAuthorizationRequest(saved.requestUriHash, `other-${t.n}`, T0 + 1),
      ).toBeNull();
      expect(
        await store.markPushedAuthorizationRequestUsed(saved.requestUriHash, `other-${t.n}`, T0 + 1),
      ).toBe(false);
      expect(
        await store.markPushedAuthorizationRequestUsed(saved.requestUriHash, saved.clientId, T0 + 1),
      ).toBe(true);
    });

    it('finds no expired request (at expiry included) and no unknown one', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      expect(
        await store.findPushedAuthorizationRequest(saved.requestUriHash, saved.clientId, T0 + 60),
      ).toBeNull();
      expect(await store.findPushedAuthorizationRequest(`par-${t.n}-unknown`, saved.clientId, T0)).toBeNull();
      expect(await store.markPushedAuthorizationRequestUsed(`par-${t.n}-unknown`, saved.clientId, T0)).toBe(
        false,
      );
    });

    it('marks a request opened before its expiry used after it (the sign-in took longer)', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      expect(
        await store.markPushedAuthorizationRequestUsed(saved.requestUriHash, saved.clientId, T0 + 300),
      ).toBe(true);
    });

    it('lets exactly one of 10 concurrent callers mark the request used', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          store.markPushedAuthorizationRequestUsed(saved.requestUriHash, saved.clientId, T0 + 1),
        ),
      );
      expect(results.filter((result) => result)).toHaveLength(1);
    });

    it('deletes requests expired at the cutoff, used or not, and keeps later ones', async () => {
      const { store } = t.fixture;
      const past = 1_000_000 + t.sequence * 10;
      await store.savePushedAuthorizationRequest(request('old', { createdAt: past - 60, expiresAt: past }));
      await store.savePushedAuthorizationRequest(
        request('used', { createdAt: past - 60, expiresAt: past, usedAt: past - 1 }),
      );
      await store.savePushedAuthorizationRequest(request('live'));
      expect(await store.deleteExpiredPushedAuthorizationRequests(past)).toBeGreaterThanOrEqual(2);
      expect(
        await store.markPushedAuthorizationRequestUsed(`par-${t.n}-old`, `client-${t.n}`, past - 1),
      ).toBe(false);
      expect(
        await store.findPushedAuthorizationRequest(`par-${t.n}-live`, `client-${t.n}`, T0),
      ).not.toBeNull();
    });
  });
}
