import { describe, expect, it } from 'vitest';
import { type ContractContext, T0 } from './context.js';

/** The DeviceCodeStore part of the store contract. */
export function describeDeviceCodeStoreContract(t: ContractContext): void {
  describe('DeviceCodeStore', () => {
    it('creates and finds a code by device-code hash and by user-code hash; null when unknown', async () => {
      const pending = t.deviceCode();
      const decided = t.deviceCode('x', {
        resources: [],
        lastPolledAt: T0 + 5,
        interval: 10,
        status: 'redeemed',
        grantId: `grant-${t.n}-g`,
        sub: `sub-${t.n}`,
        decidedAt: T0 + 7,
        redeemedAt: T0 + 9,
      });
      expect(await t.stores.deviceCodes.createDeviceCode(pending)).toBe(true);
      expect(await t.stores.deviceCodes.createDeviceCode(decided)).toBe(true);
      expect(await t.stores.deviceCodes.findDeviceCode(pending.deviceCodeHash)).toEqual(pending);
      expect(await t.stores.deviceCodes.findDeviceCode(decided.deviceCodeHash)).toEqual(decided);
      expect(await t.stores.deviceCodes.findDeviceCodeByUserCode(pending.userCodeHash)).toEqual(pending);
      expect(await t.stores.deviceCodes.findDeviceCodeByUserCode(decided.userCodeHash)).toEqual(decided);
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-missing`)).toBeNull();
      expect(await t.stores.deviceCodes.findDeviceCodeByUserCode(`uc-${t.n}-missing`)).toBeNull();
      expect(await t.stores.deviceCodes.findDeviceCode(pending.userCodeHash)).toBeNull();
    });

    it('createDeviceCode refuses a user code already taken and writes nothing', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode('a'));
      const clash = t.deviceCode('b', { userCodeHash: `uc-${t.n}-a` });
      expect(await t.stores.deviceCodes.createDeviceCode(clash)).toBe(false);
      expect(await t.stores.deviceCodes.findDeviceCode(clash.deviceCodeHash)).toBeNull();
      expect((await t.stores.deviceCodes.findDeviceCodeByUserCode(`uc-${t.n}-a`))?.deviceCodeHash).toBe(
        `dc-${t.n}-a`,
      );
    });

    it('approve moves pending → approved once, recording grant, user and time', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      const approval = { grantId: `grant-${t.n}-g`, sub: `sub-${t.n}`, at: T0 + 30 };
      expect(await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-d`, approval)).toBe(true);
      expect(await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-d`, { ...approval, at: T0 + 31 })).toBe(
        false,
      );
      expect(await t.stores.deviceCodes.denyDeviceCode(`dc-${t.n}-d`, { sub: null, at: T0 + 32 })).toBe(
        false,
      );
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-d`)).toMatchObject({
        status: 'approved',
        grantId: `grant-${t.n}-g`,
        sub: `sub-${t.n}`,
        decidedAt: T0 + 30,
        redeemedAt: null,
      });
    });

    it('deny moves pending → denied once; an approval afterwards fails', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      expect(
        await t.stores.deviceCodes.denyDeviceCode(`dc-${t.n}-d`, { sub: `sub-${t.n}`, at: T0 + 20 }),
      ).toBe(true);
      expect(
        await t.stores.deviceCodes.denyDeviceCode(`dc-${t.n}-d`, { sub: `sub-${t.n}`, at: T0 + 21 }),
      ).toBe(false);
      const approval = { grantId: `grant-${t.n}-g`, sub: `sub-${t.n}`, at: T0 + 22 };
      expect(await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-d`, approval)).toBe(false);
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-d`)).toMatchObject({
        status: 'denied',
        grantId: null,
        sub: `sub-${t.n}`,
        decidedAt: T0 + 20,
      });
    });

    it('approve and deny fail at or after expiry and for unknown codes', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      const approval = { grantId: `grant-${t.n}-g`, sub: `sub-${t.n}`, at: T0 + 600 };
      expect(await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-d`, approval)).toBe(false);
      expect(await t.stores.deviceCodes.denyDeviceCode(`dc-${t.n}-d`, { sub: null, at: T0 + 601 })).toBe(
        false,
      );
      expect((await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-d`))?.status).toBe('pending');
      expect(await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-missing`, { ...approval, at: T0 })).toBe(
        false,
      );
      expect(await t.stores.deviceCodes.denyDeviceCode(`dc-${t.n}-missing`, { sub: null, at: T0 })).toBe(
        false,
      );
    });

    it('exactly one of 10 concurrent approvals wins', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-d`, {
            grantId: `grant-${t.n}-${i}`,
            sub: `sub-${t.n}`,
            at: T0 + 1,
          }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('recordDeviceCodePoll returns the previous poll time and interval, then stores the new time', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      expect(await t.stores.deviceCodes.recordDeviceCodePoll(`dc-${t.n}-d`, T0 + 5)).toEqual({
        previousPollAt: null,
        interval: 5,
      });
      await t.stores.deviceCodes.increaseDeviceCodeInterval(`dc-${t.n}-d`, 5);
      expect(await t.stores.deviceCodes.recordDeviceCodePoll(`dc-${t.n}-d`, T0 + 7)).toEqual({
        previousPollAt: T0 + 5,
        interval: 10,
      });
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-d`)).toMatchObject({
        lastPolledAt: T0 + 7,
        interval: 10,
      });
      expect(await t.stores.deviceCodes.recordDeviceCodePoll(`dc-${t.n}-missing`, T0)).toBeNull();
    });

    it('10 concurrent polls: exactly one sees no previous poll, and each previous time is distinct', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      const polls = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.stores.deviceCodes.recordDeviceCodePoll(`dc-${t.n}-d`, T0 + 10 + i),
        ),
      );
      const previous = polls.map((poll) => poll?.previousPollAt);
      expect(previous.filter((value) => value === null)).toHaveLength(1);
      expect(new Set(previous).size).toBe(10);
    });

    it('increaseDeviceCodeInterval adds up under concurrency', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      await Promise.all(
        Array.from({ length: 4 }, () => t.stores.deviceCodes.increaseDeviceCodeInterval(`dc-${t.n}-d`, 5)),
      );
      expect((await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-d`))?.interval).toBe(25);
    });

    it('redeem moves approved → redeemed once; never from pending or denied', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode('ok'));
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode('no'));
      expect(await t.stores.deviceCodes.redeemDeviceCode(`dc-${t.n}-ok`, T0 + 40)).toBe(false);
      await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-ok`, {
        grantId: `grant-${t.n}-g`,
        sub: `sub-${t.n}`,
        at: T0 + 30,
      });
      await t.stores.deviceCodes.denyDeviceCode(`dc-${t.n}-no`, { sub: `sub-${t.n}`, at: T0 + 30 });
      expect(await t.stores.deviceCodes.redeemDeviceCode(`dc-${t.n}-no`, T0 + 40)).toBe(false);
      expect(await t.stores.deviceCodes.redeemDeviceCode(`dc-${t.n}-ok`, T0 + 41)).toBe(true);
      expect(await t.stores.deviceCodes.redeemDeviceCode(`dc-${t.n}-ok`, T0 + 42)).toBe(false);
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-ok`)).toMatchObject({
        status: 'redeemed',
        redeemedAt: T0 + 41,
        grantId: `grant-${t.n}-g`,
      });
      expect((await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-no`))?.status).toBe('denied');
      expect(await t.stores.deviceCodes.redeemDeviceCode(`dc-${t.n}-missing`, T0)).toBe(false);
    });

    it('exactly one of 10 concurrent redemptions wins', async () => {
      await t.stores.deviceCodes.createDeviceCode(t.deviceCode());
      await t.stores.deviceCodes.approveDeviceCode(`dc-${t.n}-d`, {
        grantId: `grant-${t.n}-g`,
        sub: `sub-${t.n}`,
        at: T0 + 1,
      });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.stores.deviceCodes.redeemDeviceCode(`dc-${t.n}-d`, T0 + 2 + i),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('deleteExpiredDeviceCodes removes codes expired at or before the given time only', async () => {
      // Far in the past, so this never touches the other tests' codes in a shared database.
      const past = T0 - 100_000;
      await t.stores.deviceCodes.createDeviceCode(
        t.deviceCode('old', { createdAt: past - 600, expiresAt: past }),
      );
      await t.stores.deviceCodes.createDeviceCode(
        t.deviceCode('live', { createdAt: past - 500, expiresAt: past + 1 }),
      );
      await t.stores.deviceCodes.deleteExpiredDeviceCodes(past);
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-old`)).toBeNull();
      expect(await t.stores.deviceCodes.findDeviceCode(`dc-${t.n}-live`)).not.toBeNull();
    });
  });
}
