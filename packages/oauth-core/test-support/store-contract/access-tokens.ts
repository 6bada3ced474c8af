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

    it('answers 100 concurrent finds (repeats and unknown hashes among them) each with its own token', async () => {
      const tokens = Array.from({ length: 40 }, (_, index) => t.access(`c${index}`));
      for (const token of tokens) await t.stores.accessTokens.createAccessToken(token);
      const hashes = Array.from({ length: 100 }, (_, index) =>
        index % 5 === 4 ? `at-${t.n}-missing-${index}` : tokens[index % tokens.length]!.tokenHash,
      );
      const found = await Promise.all(hashes.map((hash) => t.stores.accessTokens.findAccessToken(hash)));
      found.forEach((token, index) => {
        expect(token).toEqual(tokens.find((candidate) => candidate.tokenHash === hashes[index]) ?? null);
      });
    });

    it('a find started after revokeAccessToken returned sees the revocation, with other finds in flight', async () => {
      const target = t.access('revoked-in-flight');
      const others = Array.from({ length: 20 }, (_, index) => t.access(`busy${index}`));
      for (const token of [target, ...others]) await t.stores.accessTokens.createAccessToken(token);
      const busy = others.map((token) => t.stores.accessTokens.findAccessToken(token.tokenHash));
      await t.stores.accessTokens.revokeAccessToken(target.tokenHash, T0 + 1);
      const after = t.stores.accessTokens.findAccessToken(target.tokenHash);
      await Promise.all(busy);
      expect((await after)?.revokedAt).toBe(T0 + 1);
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
