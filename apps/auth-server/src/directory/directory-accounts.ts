import { randomUUID } from 'node:crypto';
import type { User } from '@oidc-orders/oauth-core';
import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import { allOwnedBy } from '../accounts/claim-ownership.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { externalIdentities, users } from '../db/schema.js';
import { userFromRow } from '../storage/drizzle/user-store.js';
import type { DirectoryEntry } from './types.js';

/** `external_identities.source` of directory entries (upstream providers use `idp:<id>`). */
export const DIRECTORY_SOURCE = 'ldap';

/**
 * The password hash of every directory user's local row: not in the `scrypt$N$r$p$salt$hash`
 * format, so oauth-core `verifyPassword` refuses it for any password. The password lives in the
 * directory and is checked there by a bind; it is never stored here.
 */
export const DIRECTORY_PASSWORD_HASH = 'directory$no-local-password';

/** Local usernames of directory users are namespaced, so that they never collide with a seed user's. */
export const DIRECTORY_USERNAME_PREFIX = 'ldap:';

export function isDirectoryUser(user: Pick<User, 'passwordHash'>): boolean {
  return user.passwordHash === DIRECTORY_PASSWORD_HASH;
}

/**
 * The local record of a directory entry, made at the first sign-in and refreshed at each one
 * (README "Directory users", "One person, one account"). Keyed by the entry's stable id, never by
 * its username or DN: a rename keeps the `sub`, and a deleted and re-created entry (a new
 * `entryUUID`) is a new person. Returns the user, or `null` when an operator disabled the local
 * record (`users disable`).
 */
export async function provisionDirectoryUser(
  db: AppDatabase,
  entry: DirectoryEntry,
  now: number,
): Promise<User | null> {
  return db.transaction(async (tx) => {
    const [identity] = await tx
      .select({ sub: externalIdentities.sub })
      .from(externalIdentities)
      .where(
        and(eq(externalIdentities.source, DIRECTORY_SOURCE), eq(externalIdentities.subject, entry.stableId)),
      )
      .limit(1);
    const sub = identity?.sub ?? randomUUID();
    const username = await freeLocalUsername(tx, entry, sub);
    const attributes = {
      username,
      name: entry.name,
      email: entry.email,
      // A verified address belongs to one account (src/accounts/account-mail.ts).
      emailVerified:
        entry.email !== null &&
        entry.emailVerified &&
        (await createDrizzleAccountStore(tx as unknown as AppDatabase).mayVerifyAddress(sub, entry.email)),
      groups: [...entry.groups],
      // The directory speaks for every profile claim of its users and writes them all at each
      // sign-in; recorded so an upstream linked later never takes them over.
      claimSources: allOwnedBy(DIRECTORY_SOURCE),
      updatedAt: now,
    };
    if (identity === undefined) {
      await tx.insert(users).values({
        sub,
        passwordHash: DIRECTORY_PASSWORD_HASH,
        managedBy: 'directory',
        ...attributes,
      });
      await tx.insert(externalIdentities).values({
        source: DIRECTORY_SOURCE,
        subject: entry.stableId,
        sub,
        createdAt: now,
        lastSignInAt: now,
      });
    } else {
      await tx.update(users).set(attributes).where(eq(users.sub, sub));
      await tx
        .update(externalIdentities)
        .set({ lastSignInAt: now })
        .where(
          and(
            eq(externalIdentities.source, DIRECTORY_SOURCE),
            eq(externalIdentities.subject, entry.stableId),
          ),
        );
    }
    const [row] = await tx
      .select()
      .from(users)
      .where(and(eq(users.sub, sub), isNull(users.disabledAt)))
      .limit(1);
    return row ? userFromRow(row) : null;
  });
}

type Transaction = Parameters<Parameters<AppDatabase['transaction']>[0]>[0];

/**
 * `ldap:<username>` for the entry's local row. Another directory user's row holding that name (an
 * account deleted in the directory, whose name was given to someone new) is renamed out of the
 * way to `ldap-retired:<its sub>`; a name held by a local user (only possible if a seed user was
 * given an `ldap:` name) falls back to `ldap:<stable id>`.
 */
async function freeLocalUsername(tx: Transaction, entry: DirectoryEntry, sub: string): Promise<string> {
  const wanted = `${DIRECTORY_USERNAME_PREFIX}${entry.username}`;
  const [holder] = await tx
    .select({ sub: users.sub, managedBy: users.managedBy })
    .from(users)
    .where(and(eq(users.username, wanted), ne(users.sub, sub)))
    .limit(1);
  if (holder === undefined) return wanted;
  if (holder.managedBy !== 'directory') return `${DIRECTORY_USERNAME_PREFIX}${entry.stableId}`;
  await tx
    .update(users)
    .set({ username: sql`'ldap-retired:' || ${users.sub}` })
    .where(eq(users.sub, holder.sub));
  return wanted;
}

/** The directory stable id behind a local `sub`, or `null` for users no directory speaks for. */
export async function directoryStableIdOf(db: AppDatabase, sub: string): Promise<string | null> {
  const [row] = await db
    .select({ subject: externalIdentities.subject })
    .from(externalIdentities)
    .where(and(eq(externalIdentities.source, DIRECTORY_SOURCE), eq(externalIdentities.sub, sub)))
    .limit(1);
  return row?.subject ?? null;
}
