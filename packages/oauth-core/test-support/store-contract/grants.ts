import { describe, expect, it } from 'vitest';
import { type ContractContext, T0 } from './context.js';

/** The GrantStore part of the store contract. */
export function describeGrantStoreContract(t: ContractContext): void {
  describe('GrantStore', () => {
    it('creates and finds a grant; null for an unknown id', async () => {
      const g = t.grant('g', {
        resources: ['https://a.example', 'https://b.example'],
        sid: null,
        authTime: null,
      });
      await t.stores.grants.createGrant(g);
      expect(await t.stores.grants.findGrant(g.id)).toEqual(g);
      expect(await t.stores.grants.findGrant(`grant-${t.n}-missing`)).toBeNull();
    });

    it('findGrantsBySid returns every grant of the session, revoked ones included', async () => {
      const first = t.grant('s1');
      const second = t.grant('s2', { clientId: `other-${t.n}`, revokedAt: T0 + 3 });
      await t.stores.grants.createGrant(first);
      await t.stores.grants.createGrant(second);
      await t.stores.grants.createGrant(t.grant('s3', { sid: `sid-${t.n}-other` }));
      await t.stores.grants.createGrant(t.grant('s4', { sid: null }));
      const found = await t.stores.grants.findGrantsBySid(`sid-${t.n}`);
      expect(found).toHaveLength(2);
      expect(found).toContainEqual(first);
      expect(found).toContainEqual(second);
      expect(await t.stores.grants.findGrantsBySid(`sid-${t.n}-none`)).toEqual([]);
    });

    it('revokeGrant marks the grant revoked and is idempotent (keeps the first time)', async () => {
      await t.stores.grants.createGrant(t.grant());
      await t.stores.grants.revokeGrant(`grant-${t.n}-g`, T0 + 5);
      await t.stores.grants.revokeGrant(`grant-${t.n}-g`, T0 + 9);
      expect((await t.stores.grants.findGrant(`grant-${t.n}-g`))?.revokedAt).toBe(T0 + 5);
    });

    it('revokeGrant revokes the refresh and opaque access tokens of that grant only', async () => {
      await t.stores.grants.createGrant(t.grant());
      await t.stores.grants.createGrant(t.grant('other'));
      await t.stores.refreshTokens.createRefreshToken(t.refresh('r1'));
      await t.stores.refreshTokens.createRefreshToken(
        t.refresh('r2', { parentHash: `rt-${t.n}-r1`, usedAt: null }),
      );
      await t.stores.refreshTokens.createRefreshToken(t.refresh('already', { revokedAt: T0 + 1 }));
      await t.stores.refreshTokens.createRefreshToken(
        t.refresh('r-other', { grantId: `grant-${t.n}-other` }),
      );
      await t.stores.accessTokens.createAccessToken(t.access('a1'));
      await t.stores.accessTokens.createAccessToken(t.access('a-other', { grantId: `grant-${t.n}-other` }));
      await t.stores.accessTokens.createAccessToken(
        t.access('a-cc', {
          grantId: null,
          sub: `client-${t.n}`,
          audience: ['https://api.example'],
          claims: {},
        }),
      );

      await t.stores.grants.revokeGrant(`grant-${t.n}-g`, T0 + 7);

      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r1`))?.revokedAt).toBe(T0 + 7);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r2`))?.revokedAt).toBe(T0 + 7);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-already`))?.revokedAt).toBe(T0 + 1);
      expect((await t.stores.accessTokens.findAccessToken(`at-${t.n}-a1`))?.revokedAt).toBe(T0 + 7);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r-other`))?.revokedAt).toBeNull();
      expect((await t.stores.accessTokens.findAccessToken(`at-${t.n}-a-other`))?.revokedAt).toBeNull();
      expect((await t.stores.accessTokens.findAccessToken(`at-${t.n}-a-cc`))?.revokedAt).toBeNull();
      expect((await t.stores.grants.findGrant(`grant-${t.n}-other`))?.revokedAt).toBeNull();
    });

    it('revokeGrant of an unknown grant does not throw', async () => {
      await expect(t.stores.grants.revokeGrant(`grant-${t.n}-missing`, T0)).resolves.toBeUndefined();
    });
  });
}
