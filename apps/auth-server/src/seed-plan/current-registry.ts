import { verifyPassword } from '@oidc-orders/oauth-core';
import { inArray } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import {
  clients,
  identityProviders,
  kerberosPrincipals,
  resources,
  totpCredentials,
  users,
} from '../db/schema.js';
import { readSeededTotpSecret, seededTotpId } from '../mfa/totp-repository.js';
import type { SeedUser } from '../schemas/seed.js';
import { clientFromRow, resourceFromRow } from '../storage/drizzle/registry.js';
import type { CurrentRegistry, CurrentUser } from './plan.js';

/** The user members `seed plan` compares, by seed member name, from a stored row. */
export function storedUserAttributes(row: typeof users.$inferSelect): Record<string, unknown> {
  return {
    username: row.username,
    name: row.name,
    email: row.email,
    email_verified: row.emailVerified,
    allowed_scopes: row.allowedScopes,
    mfa_required: row.mfaRequired,
  };
}

/**
 * What the database holds of everything a seed file writes. Passwords are checked (scrypt) only
 * for entries whose fingerprint changed, the only ones applying the file would rewrite.
 */
export async function readCurrentRegistry(
  db: AppDatabase,
  entries: ReadonlyMap<SeedUser, string>,
  keyEncryptionKey: Uint8Array | undefined,
): Promise<{ registry: CurrentRegistry; userRows: Map<string, typeof users.$inferSelect> }> {
  const [clientRows, resourceRows, userRows, principalRows, providerRows] = await Promise.all([
    db.select().from(clients),
    db.select().from(resources),
    db.select().from(users),
    db.select().from(kerberosPrincipals),
    db.select().from(identityProviders),
  ]);
  const seededTotp = await seededTotpSubs(
    db,
    userRows.map((row) => row.sub),
  );
  const principalBySub = new Map(principalRows.map((row) => [row.sub, row.principal]));
  const entryBySub = new Map([...entries].map(([entry, fingerprint]) => [entry.sub, { entry, fingerprint }]));
  const currentUsers: CurrentUser[] = [];
  for (const row of userRows) {
    const named = entryBySub.get(row.sub);
    const rewritten = named !== undefined && named.fingerprint !== row.seedFingerprint;
    currentUsers.push({
      sub: row.sub,
      attributes: storedUserAttributes(row),
      disabled: row.disabledAt !== null,
      disabledBy: row.disabledBy ?? null,
      managedBy: row.managedBy,
      seedFingerprint: row.seedFingerprint,
      kerberosPrincipal: principalBySub.get(row.sub) ?? null,
      passwordMatchesFile: rewritten ? await passwordMatches(named.entry, row.passwordHash) : true,
      hasSeededTotp: seededTotp.has(row.sub),
      seededTotpSecret: await seededTotpSecretOf(db, keyEncryptionKey, row.sub, seededTotp.has(row.sub)),
    });
  }
  return {
    registry: {
      clients: clientRows.map((row) => ({
        client: clientFromRow(row),
        disabled: row.disabledAt !== null,
        registered: row.registeredAt !== null,
      })),
      resources: resourceRows.map((row) => ({
        resource: resourceFromRow(row),
        disabled: row.disabledAt !== null,
      })),
      users: currentUsers,
      providers: providerRows.map((row) => ({
        id: row.id,
        issuer: row.issuer,
        client_id: row.clientId,
        display_name: row.displayName,
        disabled: row.disabledAt !== null,
      })),
    },
    userRows: new Map(userRows.map((row) => [row.sub, row])),
  };
}

async function seededTotpSubs(db: AppDatabase, subs: readonly string[]): Promise<Set<string>> {
  if (subs.length === 0) return new Set();
  const rows = await db
    .select({ sub: totpCredentials.sub })
    .from(totpCredentials)
    .where(inArray(totpCredentials.id, subs.map(seededTotpId)));
  return new Set(rows.map((row) => row.sub));
}

/** Without the key-encryption key only the presence of the seeded authenticator app is known. */
async function seededTotpSecretOf(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array | undefined,
  sub: string,
  present: boolean,
): Promise<string | null | undefined> {
  if (!present) return null;
  return keyEncryptionKey === undefined ? undefined : readSeededTotpSecret(db, keyEncryptionKey, sub);
}

function passwordMatches(entry: SeedUser, storedHash: string): Promise<boolean> {
  if (entry.password_hash !== undefined) return Promise.resolve(entry.password_hash === storedHash);
  return verifyPassword(entry.password ?? '', storedHash);
}
