import { type Clock, dummyPasswordVerify, type User } from '@oidc-orders/oauth-core';
import { directoryLoginAccountId } from '../accounts/login-accounts.js';
import type { AppDatabase } from '../db/client.js';
import { directoryStableIdOf, isDirectoryUser, provisionDirectoryUser } from './directory-accounts.js';
import type { Directory, DirectoryBindOutcome, DirectoryLookup, PasswordChangeOutcome } from './types.js';

/**
 * What a directory sign-in came to: the bind's refusals as the directory said them, or the local
 * user of the entry (`user: null` when an operator disabled the local record).
 */
export type DirectorySignInOutcome =
  | Exclude<DirectoryBindOutcome, { kind: 'ok' }>
  | {
      kind: 'ok';
      user: User | null;
      /** The login lock's account id of the entry (src/accounts/login-accounts.ts). */
      accountId: string;
      graceLoginsLeft?: number;
    };

/** What refresh asks of an account: still there, gone (or disabled), or no answer. */
export type AccountStanding = 'active' | 'ended' | 'unavailable';

export interface DirectorySignInOptions {
  directory: Directory;
  db: AppDatabase;
  clock: Clock;
  /** How long a refresh check's answer is reused, seconds (default 30). */
  checkCacheSeconds?: number;
  /** At most this many answers are kept (default 10 000); the oldest go first. */
  checkCacheEntries?: number;
}

export type DirectorySignIn = ReturnType<typeof createDirectorySignIn>;

/**
 * Directory users at sign-in and at refresh (README "Directory users"). Precedence on the login
 * form: a local (seed or `users add`) user with that username signs in with the local password;
 * any other username, and a directory user's own local record, go to the directory.
 */
export function createDirectorySignIn(options: DirectorySignInOptions) {
  const { directory, db, clock } = options;
  const standingCache = createStandingCache(
    options.checkCacheSeconds ?? 30,
    options.checkCacheEntries ?? 10_000,
    () => clock.nowSeconds(),
  );

  /** True when this login form username goes to the directory rather than the local password. */
  function handles(localUser: User | null): boolean {
    return localUser === null || isDirectoryUser(localUser);
  }

  async function authenticate(username: string, password: string): Promise<DirectorySignInOutcome> {
    // The directory answer costs at least one scrypt run, as a seed user's password check does:
    // timing does not tell a directory username from a local one or an unknown one.
    const [outcome] = await Promise.all([directory.authenticate(username, password), dummyPasswordVerify()]);
    if (outcome.kind !== 'ok') return outcome;
    const user = await provisionDirectoryUser(db, outcome.entry, clock.nowSeconds());
    standingCache.forget(outcome.entry.stableId);
    return {
      kind: 'ok',
      user,
      accountId: directoryLoginAccountId(outcome.entry.stableId),
      graceLoginsLeft: outcome.graceLoginsLeft,
    };
  }

  function changePassword(
    username: string,
    oldPassword: string,
    newPassword: string,
  ): Promise<PasswordChangeOutcome> {
    return directory.changePassword(username, oldPassword, newPassword);
  }

  /**
   * A Kerberos principal no seed user claims, mapped to its directory entry's local user.
   * `unavailable` (the directory down or slow) is not "no such entry": the person may well be
   * registered, so the sign-in says to try again, as the password sign-in does.
   */
  async function userForKerberosPrincipal(principal: string): Promise<User | null | 'unavailable'> {
    const entry = await directory.lookupByKerberosPrincipal(principal);
    if (entry === null || entry === 'unavailable') return entry;
    return provisionDirectoryUser(db, entry, clock.nowSeconds());
  }

  /**
   * At refresh: is a directory user's entry still there and enabled? Users no directory speaks for
   * are `active` without a lookup. Answers are cached briefly (a refresh storm costs one search per
   * user and window); `unavailable` is never cached.
   */
  async function standingOf(user: User): Promise<AccountStanding> {
    if (!isDirectoryUser(user)) return 'active';
    const stableId = await directoryStableIdOf(db, user.sub);
    if (stableId === null) return 'ended';
    const cached = standingCache.get(stableId);
    if (cached !== undefined) return cached;
    const lookup: DirectoryLookup = await directory.lookupByStableId(stableId);
    if (lookup === 'unavailable') return 'unavailable';
    const standing = lookup === null ? 'ended' : 'active';
    standingCache.set(stableId, standing);
    return standing;
  }

  return { directory, handles, authenticate, changePassword, userForKerberosPrincipal, standingOf };
}

/** A small time-bounded map; insertion order is age order, so the first key is the oldest. */
function createStandingCache(ttlSeconds: number, maxEntries: number, now: () => number) {
  const entries = new Map<string, { standing: AccountStanding; expiresAt: number }>();
  return {
    get(key: string): AccountStanding | undefined {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt > now()) return entry.standing;
      entries.delete(key);
      return undefined;
    },
    set(key: string, standing: AccountStanding) {
      entries.delete(key);
      entries.set(key, { standing, expiresAt: now() + ttlSeconds });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
    },
    forget(key: string) {
      entries.delete(key);
    },
  };
}
