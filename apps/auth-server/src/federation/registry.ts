import { readFile } from 'node:fs/promises';
import { and, eq, isNull, notInArray } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { identityProviders } from '../db/schema.js';
import type { SeedIdentityProvider } from '../schemas/seed.js';

/** A provider as the sign-in uses it: the seed entry with its secret or key read. */
export interface UpstreamProvider {
  id: string;
  issuer: string;
  clientId: string;
  displayName: string;
  scope: string;
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  clientSecret?: string;
  /** private_key_jwt: the PKCS#8 PEM and its `kid`. */
  privateKey?: { pem: string; kid?: string };
  linkByVerifiedEmail: boolean;
  trustUpstreamMfa: boolean;
  logoutAtProvider: boolean;
  claims: { name: string; email: string; groups: string };
  subjectClaims: 'sub' | 'tid_oid';
}

async function readSecretFile(path: string, what: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).replace(/\r?\n$/, '');
  } catch (error) {
    throw new Error(
      `identity provider ${what} file ${path} cannot be read: ${(error as NodeJS.ErrnoException).code}`,
    );
  }
}

/** Reads each entry's secret or key file once, at start; a missing file fails the start. */
export async function resolveProvider(entry: SeedIdentityProvider): Promise<UpstreamProvider> {
  const clientSecret =
    entry.client_secret ??
    (entry.client_secret_file === undefined
      ? undefined
      : await readSecretFile(entry.client_secret_file, 'secret'));
  const privateKey =
    entry.private_key_file === undefined
      ? undefined
      : { pem: await readSecretFile(entry.private_key_file, 'key'), kid: entry.private_key_id };
  return {
    id: entry.id,
    issuer: entry.issuer,
    clientId: entry.client_id,
    displayName: entry.display_name,
    scope: entry.scope,
    authMethod: entry.token_endpoint_auth_method ?? 'client_secret_basic',
    ...(clientSecret === undefined ? {} : { clientSecret }),
    ...(privateKey === undefined ? {} : { privateKey }),
    linkByVerifiedEmail: entry.link_by_verified_email === true,
    trustUpstreamMfa: entry.trust_upstream_mfa === true,
    logoutAtProvider: entry.logout_at_provider === true,
    // Safe defaults: the standard OIDC claim names (OIDC Core §5.1).
    claims: {
      name: entry.claims?.name ?? 'name',
      email: entry.claims?.email ?? 'email',
      groups: entry.claims?.groups ?? 'groups',
    },
    subjectClaims: entry.subject_claims ?? 'sub',
  };
}

/**
 * The file is the truth: upserts every entry (enabling it again) and disables the providers the
 * file no longer names, so every instance hides their buttons and refuses their callbacks.
 */
export async function applyIdentityProviders(
  db: AppDatabase,
  entries: readonly SeedIdentityProvider[],
  now: number,
): Promise<string[]> {
  return db.transaction(async (tx) => {
    for (const entry of entries) {
      const row = {
        issuer: entry.issuer,
        clientId: entry.client_id,
        displayName: entry.display_name,
        updatedAt: now,
        disabledAt: null,
      };
      await tx
        .insert(identityProviders)
        .values({ id: entry.id, ...row })
        .onConflictDoUpdate({ target: identityProviders.id, set: row });
    }
    const ids = entries.map((entry) => entry.id);
    const disabled = await tx
      .update(identityProviders)
      .set({ disabledAt: now })
      .where(
        and(
          isNull(identityProviders.disabledAt),
          ids.length ? notInArray(identityProviders.id, ids) : undefined,
        ),
      )
      .returning({ id: identityProviders.id });
    return disabled.map((row) => row.id).sort();
  });
}

/** Whether the provider is enabled in the shared table (another instance's seed may have dropped it). */
export async function isProviderEnabled(db: AppDatabase, id: string): Promise<boolean> {
  const rows = await db
    .select({ id: identityProviders.id })
    .from(identityProviders)
    .where(and(eq(identityProviders.id, id), isNull(identityProviders.disabledAt)));
  return rows.length === 1;
}

export async function enabledProviderIds(db: AppDatabase): Promise<Set<string>> {
  const rows = await db
    .select({ id: identityProviders.id })
    .from(identityProviders)
    .where(isNull(identityProviders.disabledAt));
  return new Set(rows.map((row) => row.id));
}
