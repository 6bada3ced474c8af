import type { AppDatabase } from '../db/client.js';
import { externalIdentities } from '../db/schema.js';
import { findLinkedSub, sourceOf } from './accounts.js';
import type { UpstreamProvider } from './registry.js';

/** `linked`: recorded now; `already_linked`: it was this user's; `linked_to_other`: another user's. */
export type AccountLinkOutcome = 'linked' | 'already_linked' | 'linked_to_other';

/**
 * Links (provider, upstream subject) to `sub`, a signed-in user who asked for it on the account
 * page, unless that upstream subject already signs in someone: one upstream identity enters one
 * local account, so a link never moves it from another user. The insert is conditional on the
 * primary key (source, subject), so two concurrent links cannot both win.
 */
export async function linkIdentityToAccount(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  sub: string,
  now: number,
): Promise<AccountLinkOutcome> {
  const inserted = await db
    .insert(externalIdentities)
    .values({ source: sourceOf(provider), subject, sub, createdAt: now, lastSignInAt: null })
    .onConflictDoNothing()
    .returning({ sub: externalIdentities.sub });
  if (inserted.length > 0) return 'linked';
  const owner = await findLinkedSub(db, sourceOf(provider), subject);
  return owner === sub ? 'already_linked' : 'linked_to_other';
}
