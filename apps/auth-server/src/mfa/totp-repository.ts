import type { Clock, RandomSource } from '@oidc-orders/oauth-core';
import { and, eq, isNotNull, lt } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import type { AppDatabase } from '../db/client.js';
import { totpCredentials, totpUsedSteps } from '../db/schema.js';
import { decryptPrivateKey, encryptPrivateKey } from '../keys/key-encryption.js';

/**
 * Authenticator apps (RFC 6238 TOTP: SHA-1, 6 digits, 30-second steps — what every app supports).
 * Secrets are encrypted at rest with KEY_ENCRYPTION_KEY, like the signing keys; the row id is the
 * additional authenticated data, so a secret copied onto another user's row does not decrypt.
 */
export const TOTP_PERIOD_SECONDS = 30;
/** RFC 6238 §5.2: accept one step either side for clock drift and typing time. */
const TOTP_WINDOW = 1;

/** An authenticator app as the account page lists it (never the secret). */
export interface TotpCredentialSummary {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export type TotpVerification =
  | { outcome: 'accepted'; credentialId: string }
  | { outcome: 'invalid' }
  /** A valid code of a time step already used by this user (RFC 6238 §5.2). */
  | { outcome: 'replayed' };

export interface TotpEnrolment {
  id: string;
  /** Base32 (RFC 4648) secret, shown once for manual entry. */
  secret: string;
  /** `otpauth://totp/…` for the QR code. */
  uri: string;
}

export interface TotpRepositoryDeps {
  db: AppDatabase;
  keyEncryptionKey: Uint8Array;
  clock: Clock;
  random: RandomSource;
  issuer: string;
}

const aadOf = (id: string) => `totp:${id}`;
/** The id of the credential a seed `totp_secret` imports: one per user, replaced when it changes. */
export const seededTotpId = (sub: string) => `seed:${sub}`;

export function createTotpRepository(deps: TotpRepositoryDeps) {
  const { db, keyEncryptionKey, clock } = deps;
  const totpOf = (secret: string, label: string) =>
    new TOTP({
      issuer: new URL(deps.issuer).host,
      label,
      secret: Secret.fromBase32(secret),
      period: TOTP_PERIOD_SECONDS,
    });
  const newId = () => Buffer.from(deps.random.bytes(12)).toString('base64url');

  async function confirmedRows(sub: string) {
    return db
      .select()
      .from(totpCredentials)
      .where(and(eq(totpCredentials.sub, sub), isNotNull(totpCredentials.confirmedAt)));
  }

  /** Which time step `code` is valid for under `secret` at `now`, or `null`. */
  function matchingStep(secret: string, code: string, now: number): number | null {
    if (!/^[0-9]{6}$/.test(code)) return null;
    const delta = totpOf(secret, '').validate({ token: code, timestamp: now * 1000, window: TOTP_WINDOW });
    return delta === null ? null : Math.floor(now / TOTP_PERIOD_SECONDS) + delta;
  }

  /**
   * Marks `step` used for `sub`; `false` when it already was. The primary key makes this the one
   * race-critical statement: two instances accepting the same code concurrently cannot both insert.
   */
  async function claimStep(sub: string, step: number, now: number): Promise<boolean> {
    // Housekeeping: steps older than the window can never be presented again.
    await db
      .delete(totpUsedSteps)
      .where(
        and(
          eq(totpUsedSteps.sub, sub),
          lt(totpUsedSteps.step, Math.floor(now / TOTP_PERIOD_SECONDS) - 2 * TOTP_WINDOW),
        ),
      );
    const inserted = await db
      .insert(totpUsedSteps)
      .values({ sub, step, usedAt: now })
      .onConflictDoNothing()
      .returning({ step: totpUsedSteps.step });
    return inserted.length === 1;
  }

  return {
    /** Whether the user has a confirmed authenticator app. */
    async hasConfirmed(sub: string): Promise<boolean> {
      return (await confirmedRows(sub)).length > 0;
    },

    async list(sub: string): Promise<TotpCredentialSummary[]> {
      const rows = await confirmedRows(sub);
      return rows.map(({ id, name, createdAt, lastUsedAt }) => ({ id, name, createdAt, lastUsedAt }));
    },

    /** Checks a code against every confirmed app of the user, once per user and time step. */
    async verify(sub: string, code: string): Promise<TotpVerification> {
      const now = clock.nowSeconds();
      for (const row of await confirmedRows(sub)) {
        const secret = decryptPrivateKey(keyEncryptionKey, aadOf(row.id), row.secretEncrypted);
        const step = matchingStep(secret, code, now);
        if (step === null) continue;
        if (!(await claimStep(sub, step, now))) return { outcome: 'replayed' };
        await db.update(totpCredentials).set({ lastUsedAt: now }).where(eq(totpCredentials.id, row.id));
        return { outcome: 'accepted', credentialId: row.id };
      }
      return { outcome: 'invalid' };
    },

    /** Starts an enrolment: a fresh secret, stored unconfirmed until `confirm` sees a valid code. */
    async startEnrolment(sub: string, username: string, name: string): Promise<TotpEnrolment> {
      const id = newId();
      const secret = new Secret({ size: 20 }).base32;
      await db.insert(totpCredentials).values({
        id,
        sub,
        name,
        secretEncrypted: encryptPrivateKey(keyEncryptionKey, aadOf(id), secret),
        createdAt: clock.nowSeconds(),
      });
      return { id, secret, uri: totpOf(secret, username).toString() };
    },

    /** The pending enrolment's secret and URI again (the page is reloaded), or `null`. */
    async pendingEnrolment(id: string, sub: string, username: string): Promise<TotpEnrolment | null> {
      const [row] = await db
        .select()
        .from(totpCredentials)
        .where(and(eq(totpCredentials.id, id), eq(totpCredentials.sub, sub)));
      if (!row || row.confirmedAt !== null) return null;
      const secret = decryptPrivateKey(keyEncryptionKey, aadOf(id), row.secretEncrypted);
      return { id, secret, uri: totpOf(secret, username).toString() };
    },

    /** Confirms a pending enrolment with its first valid code (which is then used up). */
    async confirm(id: string, sub: string, code: string): Promise<boolean> {
      const [row] = await db
        .select()
        .from(totpCredentials)
        .where(and(eq(totpCredentials.id, id), eq(totpCredentials.sub, sub)));
      if (!row || row.confirmedAt !== null) return false;
      const now = clock.nowSeconds();
      const secret = decryptPrivateKey(keyEncryptionKey, aadOf(id), row.secretEncrypted);
      const step = matchingStep(secret, code, now);
      if (step === null || !(await claimStep(sub, step, now))) return false;
      await db
        .update(totpCredentials)
        .set({ confirmedAt: now, lastUsedAt: now })
        .where(eq(totpCredentials.id, id));
      return true;
    },

    async rename(id: string, sub: string, name: string): Promise<boolean> {
      const rows = await db
        .update(totpCredentials)
        .set({ name })
        .where(and(eq(totpCredentials.id, id), eq(totpCredentials.sub, sub)))
        .returning({ id: totpCredentials.id });
      return rows.length === 1;
    },

    async remove(id: string, sub: string): Promise<boolean> {
      const rows = await db
        .delete(totpCredentials)
        .where(and(eq(totpCredentials.id, id), eq(totpCredentials.sub, sub)))
        .returning({ id: totpCredentials.id });
      return rows.length === 1;
    },

    /** Removes every authenticator app of the user (admin `reset-mfa`); returns how many. */
    async removeAll(sub: string): Promise<number> {
      const rows = await db
        .delete(totpCredentials)
        .where(eq(totpCredentials.sub, sub))
        .returning({ id: totpCredentials.id });
      return rows.length;
    },
  };
}

export type TotpRepository = ReturnType<typeof createTotpRepository>;

/** The secret of the user's seeded authenticator app (seed `totp_secret`), or null when there is none. */
export async function readSeededTotpSecret(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array,
  sub: string,
): Promise<string | null> {
  const id = seededTotpId(sub);
  const [row] = await db.select().from(totpCredentials).where(eq(totpCredentials.id, id));
  return row ? decryptPrivateKey(keyEncryptionKey, aadOf(id), row.secretEncrypted) : null;
}

/**
 * Seed `totp_secret` (importing users from another system): the user's seeded authenticator app
 * is created, kept when the secret is unchanged, replaced when it changed, and removed when the
 * seed no longer names one (the seed is the truth).
 */
export async function applySeededTotpSecret(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array,
  sub: string,
  secret: string | undefined,
  now: number,
): Promise<void> {
  const id = seededTotpId(sub);
  const [row] = await db.select().from(totpCredentials).where(eq(totpCredentials.id, id));
  if (secret === undefined) {
    if (row) await db.delete(totpCredentials).where(eq(totpCredentials.id, id));
    return;
  }
  const normalized = secret.replace(/\s+/g, '').toUpperCase();
  if (row && decryptPrivateKey(keyEncryptionKey, aadOf(id), row.secretEncrypted) === normalized) return;
  const values = {
    id,
    sub,
    name: 'Authenticator app',
    secretEncrypted: encryptPrivateKey(keyEncryptionKey, aadOf(id), normalized),
    createdAt: now,
    confirmedAt: now,
  };
  await db
    .insert(totpCredentials)
    .values(values)
    .onConflictDoUpdate({ target: totpCredentials.id, set: values });
}
