import type { IdentityLinkOutcome } from '../accounts/account-store.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { sourceOf } from './accounts.js';
import type { UpstreamProvider } from './registry.js';

/** `linked`: recorded now; `already_linked`: it was this user's; `linked_to_other`: another user's. */
export type AccountLinkOutcome = IdentityLinkOutcome;

/**
 * Links (provider, upstream subject) to `sub`, a signed-in user who asked for it on the account
 * page, unless that upstream subject already signs in someone: one upstream identity enters one
 * local account, so a link never moves it from another user. The insert is conditional on the
 * primary key (source, subject), so two concurrent links cannot both win.
 */
export function linkIdentityToAccount(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  sub: string,
  now: number,
): Promise<AccountLinkOutcome> {
  return createDrizzleAccountStore(db).linkIdentity(sourceOf(provider), subject, sub, now, false);
}
