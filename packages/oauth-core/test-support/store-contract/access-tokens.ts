import { describe, expect, it } from 'vitest';
import { type ContractContext, T0 } from './context.js';

/** The AccessTokenStore part of the store contract. */
export function describeAccessTokenStoreContract(t: ContractContext): void {
  describe('AccessTokenStore', () => {
    it('creates and finds an opaque token with claims; null for an unknown hash', async () => {
      const a = t.access();
      const cc = t.access('cc', { grantId: null, sub: `client-${t.n}`, claims: {}, dpopJkt: 'jkt' });
      await t.stores.accessTokens.createAccessToken(a);
      await t.stores.accessTokens.createAccessToken(cc);
      expect(await t.stores.accessTokens.findAccessToken(a.tokenHash)).toEqual(a);
      expect(await t.stores.accessTokens.findAccessToken(cc.tokenHash)).toEqual(cc);
      expect(await t.stores.accessTokens.findAccessToken(`at-${t.n}-missing`)).toBeNull();
    });

    it('revokeAccessToken revokes one token, idempotently, and ignores unknown hashes', async () => {
      await t.stores.accessTokens.createAccessToken(t.access('a1'));
      await t.stores.accessTokens.createAccessToken(t.access('a2'));
      await t.stores.accessTokens.revokeAccessToken(`at-${t.n}-a1`, T0 + 1);
      await t.stores.accessTokens.revokeAccessToken(`at-${t.n}-a1`, T0 + 2);
      await t.stores.accessTokens.revokeAccessToken(`at-${t.n}-missing`, T0 + 2);
      expect((await t.stores.accessTokens.findAccessToken(`at-${t.n}-a1`))?.revokedAt).toBe(T0 + 1);
      expect((await t.stores.accessTokens.findAccessToken(`at-${t.n}-a2`))?.revokedAt).toBeNull();
    });

    it('denylists a JWT access token by jti, idempotently', async () => {
      expect(await t.stores.accessTokens.isJwtAccessTokenRevoked(`jti-${t.n}`)).toBe(false);
      await t.stores.accessTokens.revokeJwtAccessToken(`jti-${t.n}`, T0 + 300);
      await t.stores.accessTokens.revokeJwtAccessToken(`jti-${t.n}`, T0 + 300);
      expect(await t.stores.accessTokens.isJwtAccessTokenRevoked(`jti-${t.n}`)).toBe(true);
      expect(await t.stores.accessTokens.isJwtAccessTokenRevoked(`jti-${t.n}-other`)).toBe(false);
    });
  });
}
