import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.js';

/** The ClientStore, ResourceStore, UserStore part of the store contract. */
export function describeRegistryStoreContract(t: ContractContext): void {
  describe('ClientStore, ResourceStore, UserStore', () => {
    it('finds a seeded client with every field intact, and null for an unknown id', async () => {
      const c = t.client();
      const pub = t.client({
        clientId: `public-${t.n}`,
        secretHash: null,
        frontchannelLogoutUri: 'https://rp.example/fcl',
        dpopBoundAccessTokens: false,
        dpopNonceRequired: true,
        requirePushedAuthorizationRequests: false,
        tokenExchange: null,
        keepOfflineAccessOnLogout: false,
        refreshTokenReuseInterval: 0,
      });
      await t.fixture.seed({ clients: [c, pub] });
      expect(await t.stores.clients.findClient(c.clientId)).toEqual(c);
      expect(await t.stores.clients.findClient(pub.clientId)).toEqual(pub);
      expect(await t.stores.clients.findClient(`unknown-${t.n}`)).toBeNull();
    });

    it('reseeding replaces a client (idempotent seed)', async () => {
      await t.fixture.seed({ clients: [t.client()] });
      await t.fixture.seed({ clients: [t.client({ clientName: 'Renamed' })] });
      expect((await t.stores.clients.findClient(`client-${t.n}`))?.clientName).toBe('Renamed');
    });

    it('finds a resource by exact id and lists every resource', async () => {
      const r = t.resource();
      const jwt = t.resource({
        id: `jwt-${t.n}`,
        accessTokenFormat: 'jwt',
        secretHash: 'hmac-sha256$x',
        claims: [],
      });
      await t.fixture.seed({ resources: [r, jwt] });
      expect(await t.stores.resources.findResource(r.id)).toEqual(r);
      expect(await t.stores.resources.findResource(r.id.toUpperCase())).toBeNull();
      expect(await t.stores.resources.findResource(`${r.id}/`)).toBeNull();
      const all = await t.stores.resources.listResources();
      expect(all).toContainEqual(r);
      expect(all).toContainEqual(jwt);
    });

    it('finds a user by sub and by exact, case-sensitive username', async () => {
      const u = t.user();
      const restricted = t.user({
        sub: `sub2-${t.n}`,
        username: `other-${t.n}`,
        name: null,
        email: null,
        emailVerified: false,
        allowedScopes: ['openid'],
      });
      await t.fixture.seed({ users: [u, restricted] });
      expect(await t.stores.users.findUserBySub(u.sub)).toEqual(u);
      expect(await t.stores.users.findUserBySub(restricted.sub)).toEqual(restricted);
      expect(await t.stores.users.findUserByUsername(u.username)).toEqual(u);
      expect(await t.stores.users.findUserByUsername(u.username.toUpperCase())).toBeNull();
      expect(await t.stores.users.findUserBySub(`nobody-${t.n}`)).toBeNull();
      expect(await t.stores.users.findUserByUsername(`nobody-${t.n}`)).toBeNull();
    });
  });
}
