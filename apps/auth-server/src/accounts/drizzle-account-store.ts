import { randomUUID } from 'node:crypto';
import type { User } from '@oidc-orders/oauth-core';
import { and, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { externalIdentities, users } from '../db/schema.js';
import { rulesOf } from './account-kinds.js';
import { type AddressHolder, accountMailRecipient, addressOwner, mayVerifyAddress } from './account-mail.js';
import type { AccountStore, DirectoryAccountEntry, IdentityLinkOutcome } from './account-store.js';
import { allOwnedBy, locallyOwned, type Profile, profileUpdateFrom } from './claim-ownership.js';
import { userFromRow } from './drizzle/user-store.js';

type Transaction = Parameters<Parameters<AppDatabase['transaction']>[0]>[0];

/** `external_identities.source` of directory entries (upstream providers use `idp:<id>`). */
export const DIRECTORY_SOURCE = 'ldap';

/**
 * The password hash of every account without a local password (directory, federated): not in the
 * `scrypt$N$r$p$salt$hash` format, so oauth-core `verifyPassword` refuses it for any password.
 * The kind table (./account-kinds.ts `localPassword`) says which accounts have one; this is only
 * what their rows hold in the NOT NULL column.
 */
export const NO_LOCAL_PASSWORD_HASH = {
  directory: 'directory$no-local-password',
  federated: 'federated (no password)',
} as const;

/** Local usernames of directory users are namespaced, so that they never collide with a seed user's. */
export const DIRECTORY_USERNAME_PREFIX = 'ldap:';

/**
 * The account store on the app's database (PGlite or PostgreSQL): the features' writer of `users`
 * and `external_identities`; the seed loader's writes, the sign-in lookups and the reads other stores
 * join with an account sit beside it in ./drizzle/, and no module outside src/accounts/ names these
 * tables. The rule for duplicates is the same everywhere: an external identity (source, subject)
 * enters one account (its primary key, inserts conditional on it), a username names one account (a
 * directory name freed by renaming a retired holder), and a verified address belongs to one account
 * (./account-mail.ts).
 */
export function createDrizzleAccountStore(db: AppDatabase): AccountStore {
  async function addressHolders(email: string, executor: AppDatabase = db): Promise<AddressHolder[]> {
    const rows = await executor
      .select({
        sub: users.sub,
        managedBy: users.managedBy,
        emailVerified: users.emailVerified,
        claimSources: users.claimSources,
      })
      .from(users)
      .where(and(sql`lower(${users.email}) = ${email.trim().toLowerCase()}`, isNull(users.disabledAt)))
      .orderBy(users.sub);
    return rows.map((row) => ({
      sub: row.sub,
      managedBy: row.managedBy,
      emailVerified: row.emailVerified,
      emailSource: row.claimSources.email,
    }));
  }

  /** The profile as `sub` may store it: `email_verified` only when no other account has the address as its own. */
  async function withVerificationAllowed(
    executor: AppDatabase,
    sub: string,
    profile: Profile,
  ): Promise<Profile> {
    if (!profile.emailVerified || profile.email === null) return profile;
    const allowed = mayVerifyAddress(sub, await addressHolders(profile.email, executor));
    return allowed ? profile : { ...profile, emailVerified: false };
  }

  async function findLinkedSub(source: string, subject: string, executor: AppDatabase = db) {
    const [row] = await executor
      .select({ sub: externalIdentities.sub })
      .from(externalIdentities)
      .where(and(eq(externalIdentities.source, source), eq(externalIdentities.subject, subject)));
    return row?.sub ?? null;
  }

  const identity = (source: string, subject: string) =>
    and(eq(externalIdentities.source, source), eq(externalIdentities.subject, subject));

  /** Only the claims `source` owns are rewritten, and those nobody owns that the account lacks are filled. */
  async function refreshOwnedClaims(
    tx: Transaction,
    sub: string,
    source: string,
    upstream: Profile,
    now: number,
  ) {
    const [row] = await tx.select().from(users).where(eq(users.sub, sub)).for('update');
    if (row === undefined) return;
    const executor = tx as unknown as AppDatabase;
    const { values, claimSources } = profileUpdateFrom(
      // Accounts a provider made before sources were recorded: it owned every claim then.
      { ...row, unrecordedOwnedBySource: rulesOf(row.managedBy).claimOwner === 'provider' },
      source,
      await withVerificationAllowed(executor, sub, upstream),
    );
    await tx
      .update(users)
      .set({ ...values, claimSources, updatedAt: now })
      .where(eq(users.sub, sub));
  }

  /** Whether `email` may be verified for `sub` and is still its address (compared case-insensitively). */
  const stillItsAddress = (email: string) =>
    sql`lower(coalesce(${users.email}, '')) = ${email.toLowerCase()}`;

  async function findAccount(sub: string) {
    const [row] = await db.select().from(users).where(eq(users.sub, sub));
    return row ?? null;
  }

  return {
    findAccount,
    async findAccountByUsername(username) {
      const [row] = await db.select().from(users).where(eq(users.username, username)).limit(1);
      return row ?? null;
    },
    listAccounts: () => db.select().from(users).orderBy(users.username),
    async addLocalAccount(account, now) {
      await db.insert(users).values({ ...account, managedBy: 'operator', updatedAt: now });
    },

    async setPassword(sub, passwordHash, now, conditions = {}) {
      const account = await findAccount(sub);
      if (account === null || !rulesOf(account.managedBy).localPassword) return false;
      const proven = conditions.provesAddress;
      const verified =
        proven !== undefined && mayVerifyAddress(sub, await addressHolders(proven))
          ? sql`${users.emailVerified} or ${stillItsAddress(proven)}`
          : sql`${users.emailVerified}`;
      const replacing =
        conditions.replacing === undefined ? [] : [eq(users.passwordHash, conditions.replacing)];
      const changed = await db
        .update(users)
        .set({ passwordHash, emailVerified: verified, updatedAt: now })
        .where(and(eq(users.sub, sub), ...replacing))
        .returning({ sub: users.sub });
      return changed.length > 0;
    },

    async setProvenAddress(sub, email, now) {
      const emailVerified = mayVerifyAddress(sub, await addressHolders(email));
      await db
        .update(users)
        .set({ email, emailVerified, claimSources: locallyOwned('email'), updatedAt: now })
        .where(eq(users.sub, sub));
    },

    async recordLanguage(sub, language) {
      // Conditional, so the sign-in of someone whose language did not change writes nothing.
      await db
        .update(users)
        .set({ locale: language })
        .where(and(eq(users.sub, sub), or(isNull(users.locale), ne(users.locale, language))));
    },

    async markAddressVerified(sub, email, now) {
      if (!mayVerifyAddress(sub, await addressHolders(email))) return false;
      const marked = await db
        .update(users)
        .set({ emailVerified: true, updatedAt: now })
        .where(and(eq(users.sub, sub), isNull(users.disabledAt), stillItsAddress(email)))
        .returning({ sub: users.sub });
      return marked.length > 0;
    },

    addressHolders: (email) => addressHolders(email),
    accountMailRecipient: async (email, purpose) =>
      accountMailRecipient(await addressHolders(email), purpose),
    addressOwner: async (email) => addressOwner(await addressHolders(email))?.sub ?? null,
    mayVerifyAddress: async (sub, email) => mayVerifyAddress(sub, await addressHolders(email)),
    findLinkedSub: (source, subject) => findLinkedSub(source, subject),
    async externalSubjectOf(source, sub) {
      const [row] = await db
        .select({ subject: externalIdentities.subject })
        .from(externalIdentities)
        .where(and(eq(externalIdentities.source, source), eq(externalIdentities.sub, sub)))
        .orderBy(externalIdentities.subject)
        .limit(1);
      return row?.subject ?? null;
    },

    async linkIdentity(source, subject, sub, now, signedInNow): Promise<IdentityLinkOutcome> {
      const inserted = await db
        .insert(externalIdentities)
        .values({ source, subject, sub, createdAt: now, lastSignInAt: signedInNow ? now : null })
        .onConflictDoNothing()
        .returning({ sub: externalIdentities.sub });
      if (inserted.length > 0) return 'linked';
      return (await findLinkedSub(source, subject)) === sub ? 'already_linked' : 'linked_to_other';
    },

    async unlinkIdentity(sub, source) {
      return db.transaction(async (tx) => {
        const [user] = await tx
          .select({ passwordHash: users.passwordHash })
          .from(users)
          .where(eq(users.sub, sub));
        const linked = await tx
          .select({ source: externalIdentities.source })
          .from(externalIdentities)
          .where(eq(externalIdentities.sub, sub));
        if (user === undefined || !linked.some((row) => row.source === source)) return 'unknown';
        // The password this account really has (a seed user may be passkey-only), not its kind's.
        const hasPassword = user.passwordHash.startsWith('scrypt$');
        if (!hasPassword && linked.length <= 1) return 'last_way_in';
        await tx
          .delete(externalIdentities)
          .where(and(eq(externalIdentities.sub, sub), eq(externalIdentities.source, source)));
        return 'unlinked';
      });
    },

    async signInFederated(source, subject, profile, now) {
      return db.transaction(async (tx) => {
        const executor = tx as unknown as AppDatabase;
        const existing = await findLinkedSub(source, subject, executor);
        if (existing !== null) {
          await tx.update(externalIdentities).set({ lastSignInAt: now }).where(identity(source, subject));
          await refreshOwnedClaims(tx, existing, source, profile, now);
          return existing;
        }
        const sub = randomUUID();
        await tx.insert(users).values({
          sub,
          // Unique and never typed: the federated user signs in only through the provider.
          username: `${source}:${subject}`,
          passwordHash: NO_LOCAL_PASSWORD_HASH.federated,
          ...(await withVerificationAllowed(executor, sub, profile)),
          claimSources: allOwnedBy(source),
          managedBy: 'federation',
          updatedAt: now,
        });
        await tx
          .insert(externalIdentities)
          .values({ source, subject, sub, createdAt: now, lastSignInAt: now });
        return sub;
      });
    },

    provisionDirectoryAccount: (entry, now) =>
      provisionDirectoryAccount(db, entry, now, withVerificationAllowed),
  };
}

/**
 * The local record of a directory entry, made at the first sign-in and refreshed at each one
 * (README "Directory users", "One person, one account"). Keyed by the entry's stable id, never by
 * its username or DN: a rename keeps the `sub`, and a deleted and re-created entry (a new
 * `entryUUID`) is a new person. Returns the user, or `null` when an operator disabled the local
 * record (`users disable`).
 */
async function provisionDirectoryAccount(
  db: AppDatabase,
  entry: DirectoryAccountEntry,
  now: number,
  verificationAllowed: (executor: AppDatabase, sub: string, profile: Profile) => Promise<Profile>,
): Promise<User | null> {
  return db.transaction(async (tx) => {
    const executor = tx as unknown as AppDatabase;
    const where = and(
      eq(externalIdentities.source, DIRECTORY_SOURCE),
      eq(externalIdentities.subject, entry.stableId),
    );
    const [linked] = await tx
      .select({ sub: externalIdentities.sub })
      .from(externalIdentities)
      .where(where)
      .limit(1);
    const sub = linked?.sub ?? randomUUID();
    const profile = await verificationAllowed(executor, sub, {
      name: entry.name,
      email: entry.email,
      emailVerified: entry.email !== null && entry.emailVerified,
      groups: [...entry.groups],
    });
    const attributes = {
      username: await freeDirectoryUsername(tx, entry, sub),
      ...profile,
      // The directory speaks for every profile claim of its users and writes them all at each
      // sign-in; recorded so an upstream linked later never takes them over.
      claimSources: allOwnedBy(DIRECTORY_SOURCE),
      updatedAt: now,
    };
    if (linked === undefined) {
      await tx.insert(users).values({
        sub,
        passwordHash: NO_LOCAL_PASSWORD_HASH.directory,
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
      await tx.update(externalIdentities).set({ lastSignInAt: now }).where(where);
    }
    const [row] = await tx
      .select()
      .from(users)
      .where(and(eq(users.sub, sub), isNull(users.disabledAt)))
      .limit(1);
    return row ? userFromRow(row) : null;
  });
}

/**
 * `ldap:<username>` for the entry's local row. Another directory user's row holding that name (an
 * account deleted in the directory, whose name was given to someone new) is renamed out of the
 * way to `ldap-retired:<its sub>`; a name held by a local user (only possible if a seed user was
 * given an `ldap:` name) falls back to `ldap:<stable id>`.
 */
async function freeDirectoryUsername(
  tx: Transaction,
  entry: DirectoryAccountEntry,
  sub: string,
): Promise<string> {
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
