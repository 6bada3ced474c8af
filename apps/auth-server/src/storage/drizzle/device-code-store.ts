import type { DeviceCode, DeviceCodeStatus, DeviceCodeStore } from '@oidc-orders/oauth-core';
import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { deviceCodes } from '../../db/schema.js';

/**
 * RFC 8628 device authorizations. Every transition is one conditional UPDATE … RETURNING, so of
 * any number of racing requests exactly one moves the code on.
 */
export function createDeviceCodeStore(db: AppDatabase): DeviceCodeStore {
  const pending = (hash: string, at: number) =>
    and(
      eq(deviceCodes.deviceCodeHash, hash),
      eq(deviceCodes.status, 'pending'),
      gt(deviceCodes.expiresAt, at),
    );
  return {
    async createDeviceCode(code) {
      // A user code already taken → nothing written, `false` (the caller draws another one).
      const inserted = await db
        .insert(deviceCodes)
        .values({
          deviceCodeHash: code.deviceCodeHash,
          userCodeHash: code.userCodeHash,
          clientId: code.clientId,
          scopes: [...code.scopes],
          resources: [...code.resources],
          createdAt: code.createdAt,
          expiresAt: code.expiresAt,
          pollInterval: code.interval,
          lastPolledAt: code.lastPolledAt,
          status: code.status,
          grantId: code.grantId,
          sub: code.sub,
          decidedAt: code.decidedAt,
          redeemedAt: code.redeemedAt,
        })
        .onConflictDoNothing({ target: deviceCodes.userCodeHash })
        .returning({ hash: deviceCodes.deviceCodeHash });
      return inserted.length === 1;
    },
    async findDeviceCode(deviceCodeHash) {
      const [row] = await db
        .select()
        .from(deviceCodes)
        .where(eq(deviceCodes.deviceCodeHash, deviceCodeHash))
        .limit(1);
      return row ? deviceCodeFromRow(row) : null;
    },
    async findDeviceCodeByUserCode(userCodeHash) {
      const [row] = await db
        .select()
        .from(deviceCodes)
        .where(eq(deviceCodes.userCodeHash, userCodeHash))
        .limit(1);
      return row ? deviceCodeFromRow(row) : null;
    },
    async approveDeviceCode(deviceCodeHash, { grantId, sub, at }) {
      const won = await db
        .update(deviceCodes)
        .set({ status: 'approved', grantId, sub, decidedAt: at })
        .where(pending(deviceCodeHash, at))
        .returning({ hash: deviceCodes.deviceCodeHash });
      return won.length === 1;
    },
    async denyDeviceCode(deviceCodeHash, { sub, at }) {
      const won = await db
        .update(deviceCodes)
        .set({ status: 'denied', sub, decidedAt: at })
        .where(pending(deviceCodeHash, at))
        .returning({ hash: deviceCodes.deviceCodeHash });
      return won.length === 1;
    },
    async recordDeviceCodePoll(deviceCodeHash, at) {
      // The row lock taken by FOR UPDATE makes a concurrent poll wait and then read this poll's
      // time as its "previous" one: no two polls see the same previous time.
      const result = await db.execute(sql`
        update ${deviceCodes} set last_polled_at = ${at}
        from (
          select device_code_hash, last_polled_at as previous_poll_at
          from ${deviceCodes} where device_code_hash = ${deviceCodeHash} for update
        ) as previous
        where ${deviceCodes}.device_code_hash = previous.device_code_hash
        returning previous.previous_poll_at, ${deviceCodes}.poll_interval`);
      const [row] = (
        result as unknown as { rows: Array<{ previous_poll_at: unknown; poll_interval: unknown }> }
      ).rows;
      if (!row) return null;
      return {
        previousPollAt: row.previous_poll_at === null ? null : Number(row.previous_poll_at),
        interval: Number(row.poll_interval),
      };
    },
    async increaseDeviceCodeInterval(deviceCodeHash, seconds) {
      await db
        .update(deviceCodes)
        .set({ pollInterval: sql`${deviceCodes.pollInterval} + ${seconds}` })
        .where(eq(deviceCodes.deviceCodeHash, deviceCodeHash));
    },
    async redeemDeviceCode(deviceCodeHash, at) {
      const won = await db
        .update(deviceCodes)
        .set({ status: 'redeemed', redeemedAt: at })
        .where(and(eq(deviceCodes.deviceCodeHash, deviceCodeHash), eq(deviceCodes.status, 'approved')))
        .returning({ hash: deviceCodes.deviceCodeHash });
      return won.length === 1;
    },
    async deleteExpiredDeviceCodes(before) {
      await db.delete(deviceCodes).where(lte(deviceCodes.expiresAt, before));
    },
  };
}

function deviceCodeFromRow(row: typeof deviceCodes.$inferSelect): DeviceCode {
  return {
    deviceCodeHash: row.deviceCodeHash,
    userCodeHash: row.userCodeHash,
    clientId: row.clientId,
    scopes: row.scopes,
    resources: row.resources,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    interval: row.pollInterval,
    lastPolledAt: row.lastPolledAt,
    status: row.status as DeviceCodeStatus,
    grantId: row.grantId,
    sub: row.sub,
    decidedAt: row.decidedAt,
    redeemedAt: row.redeemedAt,
  };
}
