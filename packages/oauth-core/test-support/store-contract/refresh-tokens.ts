import { beforeEach, describe, expect, it } from 'vitest';
import { commitRefreshTokenRotation } from '../../src/grants/redemption.js';
import { type ContractContext, T0 } from './context.js';

/** The RefreshTokenStore part of the store contract. */
export function describeRefreshTokenStoreContract(t: ContractContext): void {
  describe('RefreshTokenStore', () => {
    beforeEach(async () => {
      await t.stores.grants.createGrant(t.grant());
    });

    it('creates and finds a token with every field; null for an unknown hash', async () => {
      const first = t.refresh('r1');
      const child = t.refresh('r2', {
        parentHash: first.tokenHash,
        dpopJkt: 'jkt-thumbprint',
        resources: ['https://a.example'],
      });
      await t.stores.refreshTokens.createRefreshToken(first);
      await t.stores.refreshTokens.createRefreshToken(child);
      expect(await t.stores.refreshTokens.findRefreshToken(first.tokenHash)).toEqual(first);
      expect(await t.stores.refreshTokens.findRefreshToken(child.tokenHash)).toEqual(child);
      expect(await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-missing`)).toBeNull();
    });

    it('answers 100 concurrent finds (repeats and unknown hashes among them) each with its own token', async () => {
      const tokens = Array.from({ length: 40 }, (_, index) => t.refresh(`c${index}`));
      for (const token of tokens) await t.stores.refreshTokens.createRefreshToken(token);
      const hashes = Array.from({ length: 100 }, (_, index) =>
        index % 5 === 4 ? `rt-${t.n}-missing-${index}` : tokens[index % tokens.length]!.tokenHash,
      );
      const found = await Promise.all(hashes.map((hash) => t.stores.refreshTokens.findRefreshToken(hash)));
      found.forEach((token, index) => {
        expect(token).toEqual(tokens.find((candidate) => candidate.tokenHash === hashes[index]) ?? null);
      });
    });

    it('keeps a successor sealed under its parent and finds it by the parent; null without one', async () => {
      const parent = t.refresh('p');
      const sealed = t.refresh('s', { parentHash: parent.tokenHash, sealedUnderParent: 'c2VhbGVk' });
      const plain = t.refresh('q', { parentHash: sealed.tokenHash });
      for (const token of [parent, sealed, plain]) await t.stores.refreshTokens.createRefreshToken(token);
      expect(await t.stores.refreshTokens.findRefreshToken(sealed.tokenHash)).toEqual(sealed);
      expect(await t.stores.refreshTokens.findRefreshTokenSuccessor(parent.tokenHash)).toEqual(sealed);
      expect(await t.stores.refreshTokens.findRefreshTokenSuccessor(sealed.tokenHash)).toEqual(plain);
      expect(await t.stores.refreshTokens.findRefreshTokenSuccessor(plain.tokenHash)).toBeNull();
    });

    it('a rotation stores the successor with its seal, found by the rotated parent', async () => {
      const parent = t.refresh('rp');
      await t.stores.refreshTokens.createRefreshToken(parent);
      const successor = t.refresh('rs', { parentHash: parent.tokenHash, sealedUnderParent: 'c2VhbA' });
      const issued = { refreshToken: successor, accessToken: null };
      expect(await commitRefreshTokenRotation(t.stores, parent.tokenHash, T0 + 1, issued)).toBe(true);
      expect(await t.stores.refreshTokens.findRefreshTokenSuccessor(parent.tokenHash)).toEqual(successor);
    });

    it('markRefreshTokenUsed is true once, then false; the used token stays findable', async () => {
      await t.stores.refreshTokens.createRefreshToken(t.refresh());
      expect(await t.stores.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-r`, T0 + 2)).toBe(true);
      expect(await t.stores.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-r`, T0 + 3)).toBe(false);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r`))?.usedAt).toBe(T0 + 2);
    });

    it('markRefreshTokenUsed is true for exactly one of 10 concurrent calls', async () => {
      await t.stores.refreshTokens.createRefreshToken(t.refresh());
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.stores.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-r`, T0 + i),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('markRefreshTokenUsed is false for a revoked or unknown token', async () => {
      await t.stores.refreshTokens.createRefreshToken(t.refresh('rev', { revokedAt: T0 }));
      expect(await t.stores.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-rev`, T0 + 1)).toBe(false);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-rev`))?.usedAt).toBeNull();
      expect(await t.stores.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-missing`, T0)).toBe(false);
    });

    it('revokeRefreshToken revokes one token, idempotently, and ignores unknown hashes', async () => {
      await t.stores.refreshTokens.createRefreshToken(t.refresh('r1'));
      await t.stores.refreshTokens.createRefreshToken(t.refresh('r2'));
      await t.stores.refreshTokens.revokeRefreshToken(`rt-${t.n}-r1`, T0 + 4);
      await t.stores.refreshTokens.revokeRefreshToken(`rt-${t.n}-r1`, T0 + 8);
      await t.stores.refreshTokens.revokeRefreshToken(`rt-${t.n}-missing`, T0 + 8);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r1`))?.revokedAt).toBe(T0 + 4);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r2`))?.revokedAt).toBeNull();
      expect(await t.stores.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-r1`, T0 + 9)).toBe(false);
    });
  });
}
