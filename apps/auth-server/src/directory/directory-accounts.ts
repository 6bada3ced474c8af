import type { User } from '@oidc-orders/oauth-core';
import {
  createDrizzleAccountStore,
  DIRECTORY_SOURCE,
  DIRECTORY_USERNAME_PREFIX,
  NO_LOCAL_PASSWORD_HASH,
} from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import type { DirectoryEntry } from './types.js';

export { DIRECTORY_SOURCE, DIRECTORY_USERNAME_PREFIX };

/**
 * The password hash of every directory user's local row (src/accounts/drizzle-account-store.ts): no
 * password matches it. The password lives in the directory and is checked there by a bind; it is
 * never stored here.
 */
export const DIRECTORY_PASSWORD_HASH = NO_LOCAL_PASSWORD_HASH.directory;

export function isDirectoryUser(user: Pick<User, 'passwordHash'>): boolean {
  return user.passwordHash === DIRECTORY_PASSWORD_HASH;
}

/**
 * The local record of a directory entry, made at the first sign-in and refreshed at each one, by
 * the account store (src/accounts/). Returns the user, or `null` when an operator disabled the
 * local record (`users disable`).
 */
export function provisionDirectoryUser(
  db: AppDatabase,
  entry: DirectoryEntry,
  now: number,
): Promise<User | null> {
  return createDrizzleAccountStore(db).provisionDirectoryAccount(entry, now);
}

/** The directory stable id behind a local `sub`, or `null` for users no directory speaks for. */
export function directoryStableIdOf(db: AppDatabase, sub: string): Promise<string | null> {
  return createDrizzleAccountStore(db).externalSubjectOf(DIRECTORY_SOURCE, sub);
}
