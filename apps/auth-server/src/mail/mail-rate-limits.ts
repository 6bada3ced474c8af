import { type Clock, hashToken } from '@oidc-orders/oauth-core';
import type { AppDatabase } from '../db/client.js';
import { databaseRateLimitCounter } from '../http/database-rate-limit-store.js';

/**
 * Requests per window of the forms that send mail to an address someone types (the forgot-password
 * form, the account page's new address): per recipient address (mail flooding of one person), per
 * client address, and per account asking (a signed-in person changing their address).
 */
export interface MailRateLimits {
  perRecipient: number;
  perClientAddress: number;
  perAccount: number;
  windowSeconds: number;
}

export const DEFAULT_MAIL_RATE_LIMITS: MailRateLimits = {
  perRecipient: 3,
  perClientAddress: 20,
  perAccount: 3,
  windowSeconds: 15 * 60,
};

/** Who a mail request is counted against: always the recipient; the client address and the account when known. */
export interface MailRequest {
  recipient: string;
  ip?: string;
  sub?: string;
}

/**
 * Counts mail requests in the shared `rate_limit_counters` table, so every instance has the same
 * budget; the recipient's counter is one for every form, so a reset and an address change to the
 * same mailbox share it. `hit` returns the seconds to wait when a counter is past its limit, or null.
 */
export function createMailRateLimiter(deps: { db: AppDatabase; clock: Clock; limits: MailRateLimits }) {
  const countHit = databaseRateLimitCounter(deps.db, { nowMs: () => deps.clock.nowSeconds() * 1000 });
  const windowMs = deps.limits.windowSeconds * 1000;

  async function overBy(key: string, limit: number): Promise<number> {
    const counter = await countHit(key, windowMs);
    return counter.current > limit ? counter.ttl : 0;
  }

  return {
    async hit(request: MailRequest): Promise<number | null> {
      const recipient = request.recipient.trim().toLowerCase();
      const waits = [await overBy(`mail-to:${hashToken(recipient)}`, deps.limits.perRecipient)];
      if (request.ip !== undefined)
        waits.push(await overBy(`mail-ip:${request.ip}`, deps.limits.perClientAddress));
      if (request.sub !== undefined)
        waits.push(await overBy(`mail-account:${hashToken(request.sub)}`, deps.limits.perAccount));
      const waitMs = Math.max(...waits);
      return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : null;
    },
  };
}

export type MailRateLimiter = ReturnType<typeof createMailRateLimiter>;
