import { createSecretHasher, type SecretHasher } from '@oidc-orders/oauth-core';
import { usersChangedSinceApplied } from '../accounts/drizzle/seed-users.js';
import type { AppConfig, LifetimeDefaults } from '../config.js';
import type { AppDatabase } from '../db/client.js';
import type { users } from '../db/schema.js';
import { deriveSecretHashingKey } from '../keys/key-encryption.js';
import type { SeedDocument, SeedUser } from '../schemas/seed.js';
import { clientRecord, readSeedFile, resourceRecord } from '../seed.js';
import { readCurrentRegistry } from './current-registry.js';
import { type DesiredRegistry, type DesiredUser, diffSeed, type SeedPlan } from './plan.js';

/** What comparing needs besides the database: the same secret hasher and lifetimes the server applies the seed with. */
export interface SeedPlanContext {
  secrets: SecretHasher;
  lifetimes: LifetimeDefaults;
  /** Reads the seeded authenticator apps' secrets to compare them; without it only their presence is compared. */
  keyEncryptionKey?: Uint8Array;
}

/** The context of a running server or an operator command, from its configuration. */
export function seedPlanContext(config: Pick<AppConfig, 'keyEncryptionKey' | 'lifetimes'>): SeedPlanContext {
  return {
    secrets: createSecretHasher(deriveSecretHashingKey(config.keyEncryptionKey)),
    lifetimes: config.lifetimes,
    keyEncryptionKey: config.keyEncryptionKey,
  };
}

/**
 * What applying `seed` to `db` would change (src/seed-plan/plan.ts); reads only. The plan is plain
 * JSON (ids and seed member names, never a secret or a hash): `GET /admin/api/seed/plan` returns it.
 */
export async function planSeed(
  db: AppDatabase,
  seed: SeedDocument,
  context: SeedPlanContext,
): Promise<SeedPlan> {
  const seedUsers = seed.users ?? [];
  const changed = await usersChangedSinceApplied(db, seedUsers, context.secrets);
  const { registry, userRows } = await readCurrentRegistry(db, changed, context.keyEncryptionKey);
  const desired: DesiredRegistry = {
    clients: (seed.clients ?? []).map((client) => clientRecord(client, context)),
    resources: (seed.resources ?? []).map((resource) => resourceRecord(resource, context)),
    // An unchanged entry keeps the fingerprint stored for it: applying does not rewrite it.
    users: seedUsers.map((user) =>
      desiredUser(
        user,
        changed.get(user) ?? userRows.get(user.sub)?.seedFingerprint ?? '',
        userRows.get(user.sub),
      ),
    ),
    providers: (seed.identity_providers ?? []).map((provider) => ({
      id: provider.id,
      issuer: provider.issuer,
      client_id: provider.client_id,
      display_name: provider.display_name,
    })),
  };
  return diffSeed(desired, registry);
}

/** planSeed for a seed file on disk; a file that does not parse rejects with SeedError. */
export async function planSeedFile(
  db: AppDatabase,
  path: string,
  context: SeedPlanContext,
): Promise<SeedPlan> {
  return planSeed(db, await readSeedFile(path), context);
}

function desiredUser(
  user: SeedUser,
  fingerprint: string,
  stored: typeof users.$inferSelect | undefined,
): DesiredUser {
  const email = user.email ?? null;
  return {
    sub: user.sub,
    fingerprint,
    attributes: {
      username: user.username,
      name: user.name ?? null,
      email,
      // An address the user proved stays verified while the entry keeps it (upsertSeedUsers).
      email_verified:
        (user.email_verified ?? false) || (stored?.emailVerified === true && stored.email === email),
      allowed_scopes: user.allowed_scopes ?? null,
      mfa_required: user.mfa_required ?? false,
    },
    kerberosPrincipal: user.kerberos_principal ?? null,
    totpSecret: user.totp_secret === undefined ? null : user.totp_secret.replace(/\s+/g, '').toUpperCase(),
  };
}
