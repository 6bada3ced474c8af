import { type Clock, generateOpaqueToken, hashToken, type RandomSource } from '@oidc-orders/oauth-core';
import { and, eq, gt, lt } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { mailTokens } from '../db/schema.js';

export type MailTokenPurpose =
  | 'password_reset'
  | 'email_verification'
  | 'email_change'
  | 'email_change_undo'
  | 'upstream_link';

/** A live token's row, without its hash. */
export interface MailTokenRecord {
  sub: string;
  purpose: MailTokenPurpose;
  binding: string;
  email: string;
  expiresAt: number;
}

/**
 * What a link is bound to: the user's password hash when it was made, hashed again so the table
 * never holds a copy of a password hash. A password change (by any path) makes it differ.
 */
export function passwordBinding(passwordHash: string): string {
  return hashToken(`mail-token-binding:${passwordHash}`);
}

/** What a verification link is bound to: the address it was mailed to (a change of address voids it). */
export function addressBinding(email: string): string {
  return hashToken(`mail-token-address:${email.toLowerCase()}`);
}

/**
 * The tokens of mailed links (schema `mail_tokens`): 256 random bits, stored only hashed, one live
 * token per user and purpose, used once.
 */
export function createMailTokenRepository(deps: { db: AppDatabase; clock: Clock; random: RandomSource }) {
  const { db, clock } = deps;

  const record = (row: typeof mailTokens.$inferSelect): MailTokenRecord => ({
    sub: row.sub,
    purpose: row.purpose as MailTokenPurpose,
    binding: row.binding,
    email: row.email,
    expiresAt: row.expiresAt,
  });

  return {
    /** A new token for `sub` and `purpose`, replacing (voiding) the previous one; returns the token. */
    async issue(input: Omit<MailTokenRecord, 'expiresAt'> & { ttlSeconds: number }): Promise<string> {
      const token = generateOpaqueToken(deps.random, 32);
      const now = clock.nowSeconds();
      const values = {
        tokenHash: hashToken(token),
        binding: input.binding,
        email: input.email,
        createdAt: now,
        expiresAt: now + input.ttlSeconds,
      };
      await db
        .insert(mailTokens)
        .values({ sub: input.sub, purpose: input.purpose, ...values })
        .onConflictDoUpdate({ target: [mailTokens.sub, mailTokens.purpose], set: values });
      // Housekeeping without a scheduler: expired links of anyone go with each new one.
      await db.delete(mailTokens).where(lt(mailTokens.expiresAt, now));
      return token;
    },

    /** The live token's record, without using it up: opening a link changes nothing. */
    async peek(token: string, purpose: MailTokenPurpose): Promise<MailTokenRecord | null> {
      const [row] = await db.select().from(mailTokens).where(this.liveToken(token, purpose));
      return row ? record(row) : null;
    },

    /** Uses the token up: a single conditional DELETE, so it works once across every instance. */
    async consume(
      token: string,
      purpose: MailTokenPurpose,
      executor: AppDatabase = db,
    ): Promise<MailTokenRecord | null> {
      const [row] = await executor.delete(mailTokens).where(this.liveToken(token, purpose)).returning();
      return row ? record(row) : null;
    },

    liveToken(token: string, purpose: MailTokenPurpose) {
      return and(
        eq(mailTokens.tokenHash, hashToken(token)),
        eq(mailTokens.purpose, purpose),
        gt(mailTokens.expiresAt, clock.nowSeconds()),
      );
    },
  };
}

export type MailTokenRepository = ReturnType<typeof createMailTokenRepository>;
