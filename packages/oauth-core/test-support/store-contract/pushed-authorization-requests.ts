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
      ...over,
    });

    it('round-trips every field, and hands the request out exactly once', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      expect(
        await store.consumePushedAuthorizationRequest(saved.requestUriHash, saved.clientId, T0 + 1),
      ).toEqual(saved);
      expect(
        await store.consumePushedAuthorizationRequest(saved.requestUriHash, saved.clientId, T0 + 2),
      ).toBeNull();
    });

    it('refuses another client without spending the request', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      expect(
        await store.consumePushedAuthorizationRequest(saved.requestUriHash, `other-${t.n}`, T0 + 1),
      ).toBeNull();
      expect(
        await store.consumePushedAuthorizationRequest(saved.requestUriHash, saved.clientId, T0 + 1),
      ).not.toBeNull();
    });

    it('refuses an expired request (at expiry included) and an unknown one', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      expect(
        await store.consumePushedAuthorizationRequest(saved.requestUriHash, saved.clientId, T0 + 60),
      ).toBeNull();
      expect(
        await store.consumePushedAuthorizationRequest(`par-${t.n}-unknown`, saved.clientId, T0),
      ).toBeNull();
    });

    it('gives the request to exactly one of 10 concurrent consumers', async () => {
      const { store } = t.fixture;
      const saved = request();
      await store.savePushedAuthorizationRequest(saved);
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          store.consumePushedAuthorizationRequest(saved.requestUriHash, saved.clientId, T0 + 1),
        ),
      );
      expect(results.filter((result) => result !== null)).toHaveLength(1);
    });

    it('deletes expired requests and keeps live ones', async () => {
      const { store } = t.fixture;
      const past = 1_000_000 + t.sequence * 10;
      await store.savePushedAuthorizationRequest(request('old', { createdAt: past - 60, expiresAt: past }));
      await store.savePushedAuthorizationRequest(request('live'));
      expect(await store.deleteExpiredPushedAuthorizationRequests(past)).toBeGreaterThanOrEqual(1);
      expect(
        await store.consumePushedAuthorizationRequest(`par-${t.n}-old`, `client-${t.n}`, past - 1),
      ).toBeNull();
      expect(
        await store.consumePushedAuthorizationRequest(`par-${t.n}-live`, `client-${t.n}`, T0),
      ).not.toBeNull();
    });
  });
}
