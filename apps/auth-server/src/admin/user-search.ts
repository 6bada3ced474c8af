import { and, asc, eq, gt, ilike, or } from 'drizzle-orm';
import type { AccountRecord } from '../accounts/account-store.js';
import type { AppDatabase } from '../db/client.js';
import { externalIdentities, kerberosPrincipals, users } from '../db/schema.js';

/**
 * Finding users as an operator (the admin API and console): a search with keyset paging, and the
 * identities linked to one user. Reads only.
 */

/** An identity elsewhere that signs in as a user (`external_identities`, Kerberos principals). */
export interface LinkedIdentity {
  source: string;
  subject: string;
  linkedAt: number | null;
  lastSignInAt: number | null;
}

/** One row of a user search: what the admin API's `GET /admin/api/users` lists. */
export interface UserSummary {
  sub: string;
  username: string;
  name: string | null;
  email: string | null;
  status: 'enabled' | 'disabled';
  /** Who keeps the account (`users.managed_by`): the seed file, an operator, the directory or a provider. */
  source: 'seed' | 'operator' | 'directory' | 'federation';
}

/** A page of a search: `next` is the cursor of the following page, `null` on the last one. */
export interface UserSearchPage {
  users: UserSummary[];
  next: string | null;
}

export interface UserSearch {
  /** Part of the username, name or e-mail address (case-insensitive), or the exact `sub`. */
  q?: string | undefined;
  limit?: number | undefined;
  /** The `next` cursor of the previous page. */
  cursor?: string | undefined;
}

/** Everything an operator sees of one user. */
export interface UserDetail extends UserSummary {
  emailVerified: boolean;
  mfaRequired: boolean;
  /** The `groups` claim (a directory's or a provider's), `null` when nobody speaks for it. */
  groups: string[] | null;
  factors: {
    authenticatorApps: Array<{ id: string; name: string; createdAt: number; lastUsedAt: number | null }>;
    passkeys: Array<{ id: string; name: string; createdAt: number; lastUsedAt: number | null }>;
    recoveryCodesRemaining: number;
  };
  /** Identities elsewhere that sign in as this user: upstream providers, the directory, Kerberos. */
  linkedIdentities: Array<{
    source: string;
    subject: string;
    linkedAt: number | null;
    lastSignInAt: number | null;
  }>;
  activeSessions: number;
  activeGrants: number;
}

export const USER_SEARCH_MAX_LIMIT = 200;
const USER_SEARCH_DEFAULT_LIMIT = 50;

/** LIKE's own characters in a search text stand for themselves. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/** The cursor is the last username of a page (usernames are unique, the order is by username). */
const encodeCursor = (username: string) => Buffer.from(username, 'utf8').toString('base64url');
const decodeCursor = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');

export function summaryOf(row: AccountRecord): UserSummary {
  return {
    sub: row.sub,
    username: row.username,
    name: row.name,
    email: row.email,
    status: row.disabledAt === null ? 'enabled' : 'disabled',
    source: row.managedBy,
  };
}

export async function searchUsers(db: AppDatabase, query: UserSearch): Promise<UserSearchPage> {
  const limit = Math.min(Math.max(query.limit ?? USER_SEARCH_DEFAULT_LIMIT, 1), USER_SEARCH_MAX_LIMIT);
  const text = query.q?.trim() ?? '';
  const matches =
    text === ''
      ? undefined
      : or(
          eq(users.sub, text),
          ilike(users.username, likePattern(text)),
          ilike(users.email, likePattern(text)),
          ilike(users.name, likePattern(text)),
        );
  const after = query.cursor === undefined ? undefined : gt(users.username, decodeCursor(query.cursor));
  // Keyset paging by the unique username: a page costs the same at any depth (one more row
  // tells whether there is a next page).
  const rows = await db
    .select()
    .from(users)
    .where(and(matches, after))
    .orderBy(asc(users.username))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    users: page.map(summaryOf),
    next: rows.length > limit && last ? encodeCursor(last.username) : null,
  };
}

export async function linkedIdentitiesOf(db: AppDatabase, sub: string): Promise<LinkedIdentity[]> {
  const external = await db
    .select()
    .from(externalIdentities)
    .where(eq(externalIdentities.sub, sub))
    .orderBy(asc(externalIdentities.source));
  const principals = await db
    .select({ principal: kerberosPrincipals.principal })
    .from(kerberosPrincipals)
    .where(eq(kerberosPrincipals.sub, sub));
  return [
    ...external.map((row) => ({
      source: row.source,
      subject: row.subject,
      linkedAt: row.createdAt,
      lastSignInAt: row.lastSignInAt,
    })),
    ...principals.map((row) => ({
      source: 'kerberos',
      subject: row.principal,
      linkedAt: null,
      lastSignInAt: null,
    })),
  ];
}
