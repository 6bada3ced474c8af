import type { SecretHasher } from '@oidc-orders/oauth-core';
import { hashPassword, type ScryptCost, verifyPassword } from '@oidc-orders/oauth-core';
import { inArray } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { users } from '../../db/schema.js';
import type { SeedUser } from '../../schemas/seed.js';
import { appliedSeedFingerprints } from './user-ownership.js';

/**
 * The seed's users against what the database holds: which entries changed since they were last
 * applied (a keyed fingerprint of each entry), and the password hash each changed entry gets (the
 * stored one when its plain-text password still matches, so a restart does not re-hash).
 */

/**
 * Keyed HMAC (the server's secret hasher) of the entry's canonical JSON: the same entry gives the
 * same fingerprint whatever its member order, and a stored fingerprint lets no one test guesses of
 * a plain-text `password` without KEY_ENCRYPTION_KEY.
 */
export function seedUserFingerprint(secrets: SecretHasher, user: SeedUser): string {
  return secrets.hash(`seed user entry ${canonicalJson(user)}`);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const members = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
}

/** The entries whose fingerprint differs from the one applied last (new users included), with it. */
export async function usersChangedSinceApplied(
  db: AppDatabase,
  seedUsers: readonly SeedUser[],
  secrets: SecretHasher,
): Promise<Map<SeedUser, string>> {
  const applied = await appliedSeedFingerprints(
    db,
    seedUsers.map((user) => user.sub),
  );
  const changed = new Map<SeedUser, string>();
  for (const user of seedUsers) {
    const fingerprint = seedUserFingerprint(secrets, user);
    if (applied.get(user.sub) !== fingerprint) changed.set(user, fingerprint);
  }
  return changed;
}

/** A hash for each entry: its `password_hash`, the stored hash when the password still matches, or a new one. */
export async function resolvePasswordHashes(
  db: AppDatabase,
  seedUsers: readonly SeedUser[],
  cost: ScryptCost,
): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  const plain = seedUsers.filter((user) => user.password !== undefined);
  const stored =
    plain.length === 0
      ? []
      : await db
          .select({ sub: users.sub, passwordHash: users.passwordHash })
          .from(users)
          .where(
            inArray(
              users.sub,
              plain.map((user) => user.sub),
            ),
          );
  const storedBySub = new Map(stored.map((row) => [row.sub, row.passwordHash]));
  for (const user of seedUsers) {
    if (user.password_hash !== undefined) {
      hashes.set(user.sub, user.password_hash);
      continue;
    }
    const password = user.password ?? '';
    const existing = storedBySub.get(user.sub);
    hashes.set(
      user.sub,
      existing !== undefined && (await verifyPassword(password, existing))
        ? existing
        : await hashPassword(password, { cost }),
    );
  }
  return hashes;
}
