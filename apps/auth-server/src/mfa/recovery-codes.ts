import { createHmac, hkdfSync } from 'node:crypto';
import type { Clock, RandomSource } from '@oidc-orders/oauth-core';
import { and, count, eq, isNull } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { recoveryCodes } from '../db/schema.js';

/** How many codes a set holds. */
export const RECOVERY_CODE_COUNT = 10;
/** Crockford-style alphabet without look-alikes (no 0/O, 1/I/L). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 10;

/**
 * Ten single-use recovery codes per user, for when the authenticator app is lost. Each code is 10
 * characters from a 31-letter alphabet (~49 bits); only an HMAC under a key derived from
 * KEY_ENCRYPTION_KEY is stored. Using one is a conditional update (`used_at IS NULL`), so a code
 * works once across every instance.
 */
export function createRecoveryCodeRepository(deps: {
  db: AppDatabase;
  keyEncryptionKey: Uint8Array;
  clock: Clock;
  random: RandomSource;
}) {
  const { db, clock } = deps;
  const key = new Uint8Array(
    hkdfSync('sha256', deps.keyEncryptionKey, Buffer.alloc(0), 'auth-server recovery codes v1', 32),
  );
  const normalize = (code: string) => code.toUpperCase().replace(/[^A-Z0-9]/g, '');
  const hashOf = (sub: string, code: string) =>
    createHmac('sha256', key)
      .update(`${sub}:${normalize(code)}`)
      .digest('base64url');

  function newCode(): string {
    const bytes = deps.random.bytes(CODE_LENGTH);
    // 256 % 31 leaves a bias of under 1% per character: irrelevant for a 49-bit single-use code.
    const letters = [...bytes].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
    return `${letters.slice(0, 5)}-${letters.slice(5)}`;
  }

  return {
    /** Replaces the user's set with ten fresh codes and returns them (shown once). */
    async regenerate(sub: string): Promise<string[]> {
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
      const now = clock.nowSeconds();
      await db.transaction(async (tx) => {
        await tx.delete(recoveryCodes).where(eq(recoveryCodes.sub, sub));
        await tx
          .insert(recoveryCodes)
          .values(codes.map((code) => ({ sub, codeHash: hashOf(sub, code), createdAt: now })));
      });
      return codes;
    },

    /** Uses a code: `true` once per code, `false` when unknown or already used. */
    async use(sub: string, code: string): Promise<boolean> {
      if (normalize(code).length !== CODE_LENGTH) return false;
      const rows = await db
        .update(recoveryCodes)
        .set({ usedAt: clock.nowSeconds() })
        .where(
          and(
            eq(recoveryCodes.sub, sub),
            eq(recoveryCodes.codeHash, hashOf(sub, code)),
            isNull(recoveryCodes.usedAt),
          ),
        )
        .returning({ sub: recoveryCodes.sub });
      return rows.length === 1;
    },

    /** How many unused codes the user has left. */
    async remaining(sub: string): Promise<number> {
      const [row] = await db
        .select({ value: count() })
        .from(recoveryCodes)
        .where(and(eq(recoveryCodes.sub, sub), isNull(recoveryCodes.usedAt)));
      return row?.value ?? 0;
    },

    /** Whether the user ever got a set (used up or not). */
    async hasSet(sub: string): Promise<boolean> {
      const [row] = await db.select({ value: count() }).from(recoveryCodes).where(eq(recoveryCodes.sub, sub));
      return (row?.value ?? 0) > 0;
    },

    async removeAll(sub: string): Promise<number> {
      const rows = await db
        .delete(recoveryCodes)
        .where(eq(recoveryCodes.sub, sub))
        .returning({ sub: recoveryCodes.sub });
      return rows.length;
    },
  };
}

export type RecoveryCodeRepository = ReturnType<typeof createRecoveryCodeRepository>;
