import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { UpstreamArrival } from '../accounts/first-sign-in.js';
import type { AppDatabase } from '../db/client.js';
import { findLinkedSub, mappedProfile, sourceOf, type UpstreamClaims } from './accounts.js';
import type { UpstreamProvider } from './registry.js';

/**
 * What the first-sign-in decision (src/accounts/first-sign-in.ts) needs to know of an upstream
 * identity that came back: whether it is linked already, and who holds the address it sent.
 */
export async function upstreamArrival(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string | null,
  claims: UpstreamClaims,
): Promise<UpstreamArrival> {
  const { email, emailVerified } = mappedProfile(provider, claims);
  return {
    subject,
    linkedSub: subject === null ? null : await findLinkedSub(db, sourceOf(provider), subject),
    linkByVerifiedEmail: provider.linkByVerifiedEmail,
    email,
    emailVerified,
    holders: email ? await createDrizzleAccountStore(db).addressHolders(email) : [],
  };
}

/** Records the proven link: this upstream subject now signs in `sub` (unless it already enters an account). */
export async function linkIdentity(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  sub: string,
  now: number,
): Promise<void> {
  await createDrizzleAccountStore(db).linkIdentity(sourceOf(provider), subject, sub, now, true);
}
