import { describe, expect, it } from 'vitest';
import { type ContractContext, T0 } from './context.js';

/** The ProtocolStores.transaction part of the store contract. */
export function describeTransactionContract(t: ContractContext): void {
  describe('transaction', () => {
    it('commits every write and returns the value of work', async () => {
      const value = await t.stores.transaction(async (tx) => {
        await tx.grants.createGrant(t.grant());
        await tx.codes.createAuthorizationCode(t.code());
        await tx.refreshTokens.createRefreshToken(t.refresh());
        await tx.accessTokens.createAccessToken(t.access());
        return 42;
      });
      expect(value).toBe(42);
      expect(await t.stores.grants.findGrant(`grant-${t.n}-g`)).not.toBeNull();
      expect(await t.stores.codes.findAuthorizationCode(`code-${t.n}-c`)).not.toBeNull();
      expect(await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r`)).not.toBeNull();
      expect(await t.stores.accessTokens.findAccessToken(`at-${t.n}-a`)).not.toBeNull();
    });

    it('sees its own writes inside the transaction', async () => {
      await t.stores.transaction(async (tx) => {
        await tx.grants.createGrant(t.grant());
        expect((await tx.grants.findGrant(`grant-${t.n}-g`))?.id).toBe(`grant-${t.n}-g`);
      });
    });

    it('rolls back every write when work throws, and rethrows the same error', async () => {
      await t.stores.grants.createGrant(t.grant('existing'));
      await t.stores.codes.createAuthorizationCode(t.code('existing', { grantId: `grant-${t.n}-existing` }));
      await t.stores.refreshTokens.createRefreshToken(
        t.refresh('existing', { grantId: `grant-${t.n}-existing` }),
      );
      await t.stores.accessTokens.createAccessToken(
        t.access('existing', { grantId: `grant-${t.n}-existing` }),
      );
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode('existing'));
      const failure = new Error('boom');

      const outcome = t.stores.transaction(async (tx) => {
        await tx.grants.createGrant(t.grant());
        await tx.codes.createAuthorizationCode(t.code());
        await tx.refreshTokens.createRefreshToken(t.refresh());
        await tx.accessTokens.createAccessToken(t.access());
        expect(await tx.codes.consumeAuthorizationCode(`code-${t.n}-existing`, T0 + 1)).toBe(true);
        expect(await tx.refreshTokens.markRefreshTokenUsed(`rt-${t.n}-existing`, T0 + 1)).toBe(true);
        await tx.grants.revokeGrant(`grant-${t.n}-existing`, T0 + 1);
        await tx.accessTokens.revokeJwtAccessToken(`jti-${t.n}`, T0 + 300);
        expect(await tx.deviceCodes.createDeviceCode(t.deviceCode('new'))).toBe(true);
        expect(
          await tx.deviceCodes.approveDeviceCode(`dc-${t.n}-existing`, {
            grantId: `grant-${t.n}-existing`,
            sub: `sub-${t.n}`,
            at: T0 + 1,
          }),
        ).toBe(true);
        await tx.deviceCodes.recordDeviceCodePoll(`dc-${t.n}-existing`, T0 + 1);
        await tx.deviceCodes.increaseDeviceCodeInterval(`dc-${t.n}-existing`, 5);
        throw failure;
      });
      await expect(outcome).rejects.toBe(failure);

      expect(await t.stores.grants.findGrant(`grant-${t.n}-g`)).toBeNull();
      expect(await t.stores.codes.findAuthorizationCode(`code-${t.n}-c`)).toBeNull();
      expect(await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r`)).toBeNull();
      expect(await t.stores.accessTokens.findAccessToken(`at-${t.n}-a`)).toBeNull();
      expect((await t.stores.codes.findAuthorizationCode(`code-${t.n}-existing`))?.usedAt).toBeNull();
      const rt = await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-existing`);
      expect(rt?.usedAt).toBeNull();
      expect(rt?.revokedAt).toBeNull();
      expect((await t.stores.grants.findGrant(`grant-${t.n}-existing`))?.revokedAt).toBeNull();
      expect((await t.stores.accessTokens.findAccessToken(`at-${t.n}-existing`))?.revokedAt).toBeNull();
      expect(await t.stores.accessTokens.isJwtAccessTokenRevoked(`jti-${t.n}`)).toBe(false);
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-new`)).toBeNull();
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-existing`)).toEqual(
        t.deviceCode('existing'),
      );
      // The rolled-back consumption leaves the code usable.
      expect(await t.stores.codes.consumeAuthorizationCode(`code-${t.n}-existing`, T0 + 2)).toBe(true);
    });

    it('concurrent transactions racing on one code commit exactly one winner', async () => {
      await t.stores.grants.createGrant(t.grant());
      await t.stores.codes.createAuthorizationCode(t.code());
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.stores.transaction(async (tx) => {
            if (!(await tx.codes.consumeAuthorizationCode(`code-${t.n}-c`, T0 + 1))) return false;
            await tx.accessTokens.createAccessToken(t.access(`race-${i}`));
            return true;
          }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}
