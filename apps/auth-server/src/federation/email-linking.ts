import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { externalIdentities } from '../db/schema.js';
import { findLinkedSub, mappedProfile, sourceOf, type UpstreamClaims } from './accounts.js';
import type { UpstreamProvider } from './registry.js';

/**
 * The existing local user a first federated sign-in may be linked to, or `null`: only when the
 * provider is configured for it (`link_by_verified_email`), the upstream says `email_verified: true`
 * for the very address it sent (the pair comes from one response, see upstreamClaims), and that
 * address belongs to one enabled account here (src/accounts/account-mail.ts `addressOwner`: the
 * account it is verified for, or the one the operator gave it to) of a kind that may be a link
 * target (not a federated one). The link itself waits for that user's proof (their password, or a
 * link mailed to that address), so a provider that lies about addresses cannot take an account
 * over by itself.
 */
export async function emailLinkCandidate(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  claims: UpstreamClaims,
): Promise<string | null> {
  if (!provider.linkByVerifiedEmail || claims.email_verified !== true) return null;
  const { email } = mappedProfile(provider, claims);
  if (email === null || email === '') return null;
  if ((await findLinkedSub(db, sourceOf(provider), subject)) !== null) return null;
  const accounts = createDrizzleAccountStore(db);
  const owner = await accounts.addressOwner(email);
  return owner !== null && (await accounts.accountMailRecipient(email, 'upstream_link')) === owner
    ? owner
    : null;
}

/** Records the proven link: this upstream subject now signs in `sub`. */
export async function linkIdentity(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  sub: string,
  now: number,
): Promise<void> {
  await db
    .insert(externalIdentities)
    .values({ source: sourceOf(provider), subject, sub, createdAt: now, lastSignInAt: now })
    .onConflictDoNothing();
}
