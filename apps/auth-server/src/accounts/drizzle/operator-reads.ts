import { count, eq, inArray, max, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { externalIdentities, users } from '../../db/schema.js';

/**
 * What the operations plane (the console's overview, the admin API's provider list, `seed plan`)
 * reads of the account tables, kept here with every other statement on them: one home decides
 * what an account row says.
 */

/** A stored account row, as `seed plan` compares it with a seed entry. */
export type StoredUserRow = typeof users.$inferSelect;

/** Every account row (the seed plan compares them all with the file). */
export function allUserRows(db: AppDatabase): Promise<StoredUserRow[]> {
  return db.select().from(users);
}

/** How many accounts there are, and how many of them are disabled. */
export async function countUsers(db: AppDatabase): Promise<{ total: number; disabled: number }> {
  const [row] = await db
    .select({
      total: count(),
      disabled: sql<number>`count(*) filter (where ${users.disabledAt} is not null)`.mapWith(Number),
    })
    .from(users);
  return { total: row?.total ?? 0, disabled: row?.disabled ?? 0 };
}

/** The usernames of the given subjects (a session list names whose each session is). */
export async function usernamesBySub(db: AppDatabase, subs: readonly string[]): Promise<Map<string, string>> {
  if (subs.length === 0) return new Map();
  const rows = await db
    .select({ sub: users.sub, username: users.username })
    .from(users)
    .where(inArray(users.sub, [...new Set(subs)]));
  return new Map(rows.map((row) => [row.sub, row.username]));
}

/** Accounts linked to one source (`idp:<id>`), and the latest sign-in through it. */
export async function linkedAccountsOf(
  db: AppDatabase,
  source: string,
): Promise<{ accounts: number; lastSignInAt: number | null }> {
  const [row] = await db
    .select({ accounts: count(), newest: max(externalIdentities.lastSignInAt) })
    .from(externalIdentities)
    .where(eq(externalIdentities.source, source));
  return { accounts: row?.accounts ?? 0, lastSignInAt: row?.newest ?? null };
}
