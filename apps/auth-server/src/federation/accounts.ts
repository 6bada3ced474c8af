import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { rulesOf } from '../accounts/account-kinds.js';
import { allOwnedBy, boundedGroups, type Profile, profileUpdateFrom } from '../accounts/claim-ownership.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { externalIdentities, users } from '../db/schema.js';
import type { UpstreamProvider } from './registry.js';

/**
 * Local accounts of federated identities. An identity is keyed by (provider, upstream subject) and
 * never by a mutable e-mail address or username, so the `sub` we issue stays the same however the
 * upstream renames the person, and a re-created upstream account is a new person.
 */

/** The claims of one upstream sign-in that matter here (the ID token's, after validation). */
export type UpstreamClaims = Record<string, unknown>;

/** `idp:<id>`, the `external_identities.source` of a provider. */
export const sourceOf = (provider: UpstreamProvider) => `idp:${provider.id}`;

/**
 * The upstream's stable subject: `sub`, or for Entra ID `tid:oid` (tenant and object id, which
 * Microsoft documents as the stable key; its `sub` is pairwise per application and its `email`
 * and `preferred_username` are mutable). `null` when the claims lack it.
 */
export function upstreamSubject(provider: UpstreamProvider, claims: UpstreamClaims): string | null {
  const text = (name: string) =>
    typeof claims[name] === 'string' && claims[name] !== '' ? (claims[name] as string) : null;
  if (provider.subjectClaims === 'tid_oid') {
    const tid = text('tid');
    const oid = text('oid');
    return tid && oid ? `${tid}:${oid}` : null;
  }
  return text('sub');
}

/**
 * The profile claims the provider's mapping names (OIDC Core §5.1 names by default), with
 * anything not a string dropped, and its groups within `boundedGroups`' safe limits.
 */
export function mappedProfile(provider: UpstreamProvider, claims: UpstreamClaims): Profile {
  const text = (name: string) => (typeof claims[name] === 'string' ? (claims[name] as string) : null);
  const email = text(provider.claims.email);
  return {
    name: text(provider.claims.name),
    email,
    emailVerified: email !== null && claims.email_verified === true,
    groups: boundedGroups(claims[provider.claims.groups]),
  };
}

/**
 * The upstream's profile as this account may store it: `email_verified` only when no other account
 * has the address as its own (src/accounts/account-mail.ts `mayVerifyAddress`). A provider that
 * says an address is verified never makes it verified for a second account, nor shadows the
 * account the operator gave it to; an unverified claim is stored unverified, as it came.
 */
async function withVerificationAllowed(db: AppDatabase, sub: string, profile: Profile): Promise<Profile> {
  if (!profile.emailVerified || profile.email === null) return profile;
  const allowed = await createDrizzleAccountStore(db).mayVerifyAddress(sub, profile.email);
  return allowed ? profile : { ...profile, emailVerified: false };
}

export async function findLinkedSub(
  db: AppDatabase,
  source: string,
  subject: string,
): Promise<string | null> {
  const [row] = await db
    .select({ sub: externalIdentities.sub })
    .from(externalIdentities)
    .where(and(eq(externalIdentities.source, source), eq(externalIdentities.subject, subject)));
  return row?.sub ?? null;
}

/**
 * A linked user's profile after a sign-in through `source`: only the claims that source owns are
 * rewritten, and the ones nobody owns that the account lacks are filled (../accounts/claim-ownership.ts).
 */
async function refreshOwnedClaims(
  db: AppDatabase,
  sub: string,
  source: string,
  upstream: Profile,
  now: number,
) {
  await db.transaction(async (tx) => {
    const [row] = await tx.select().from(users).where(eq(users.sub, sub)).for('update');
    if (row === undefined) return;
    const { values, claimSources } = profileUpdateFrom(
      { ...row, unrecordedOwnedBySource: rulesOf(row.managedBy).claimOwner === 'provider' },
      source,
      await withVerificationAllowed(tx as unknown as AppDatabase, sub, upstream),
    );
    await tx
      .update(users)
      .set({ ...values, claimSources, updatedAt: now })
      .where(eq(users.sub, sub));
  });
}

/**
 * The local user of this upstream identity: the linked one (its claims refreshed where the
 * upstream owns them), or a new one created now, every claim owned by the provider. The new
 * user's password hash is not a scrypt hash, so no password ever signs it in.
 */
export async function signInFederatedIdentity(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  claims: UpstreamClaims,
  now: number,
): Promise<string> {
  const source = sourceOf(provider);
  const profile = mappedProfile(provider, claims);
  const existing = await findLinkedSub(db, source, subject);
  if (existing !== null) {
    await db
      .update(externalIdentities)
      .set({ lastSignInAt: now })
      .where(and(eq(externalIdentities.source, source), eq(externalIdentities.subject, subject)));
    await refreshOwnedClaims(db, existing, source, profile, now);
    return existing;
  }
  const sub = randomUUID();
  await db.transaction(async (tx) => {
    await tx.insert(users).values({
      sub,
      // Unique and never typed: the federated user signs in only through the provider.
      username: `${source}:${subject}`,
      passwordHash: 'federated (no password)',
      ...(await withVerificationAllowed(tx as unknown as AppDatabase, sub, profile)),
      claimSources: allOwnedBy(source),
      managedBy: 'federation',
      updatedAt: now,
    });
    await tx.insert(externalIdentities).values({ source, subject, sub, createdAt: now, lastSignInAt: now });
  });
  return sub;
}
