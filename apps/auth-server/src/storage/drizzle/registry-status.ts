import { and, eq, isNotNull, isNull, notInArray } from 'drizzle-orm';
import { disableSeedUsersNotIn, setUserDisabledByOperator } from '../../accounts/drizzle/user-ownership.js';
import type { AppDatabase } from '../../db/client.js';
import { clients, resources } from '../../db/schema.js';

/**
 * Enabling and disabling registry entries (clients, resources, users): the one mechanism behind
 * "the seed file is the truth" and the operator's `users disable|enable`. A disabled row keeps its
 * history and every reference to it (grants, tokens, audit); it only sets `disabled_at`, and every
 * registry lookup (`createDrizzleStores`: the client/resource snapshot, `findUserBySub`,
 * `findUserByUsername`) skips such rows. Through those lookups a disabled entry's sign-in, client
 * or resource authentication, refresh tokens, introspection and UserInfo all fail with the errors an
 * unknown entry gets. Callers that change a client or resource call `invalidateRegistry()` on the
 * stores reading this database (other instances pick it up within the snapshot TTL).
 */

export type RegistryKind = 'clients' | 'resources' | 'users';

/** The tables switched here; users are switched by the account store (src/accounts/drizzle/user-ownership.ts). */
const TABLES = {
  clients: { table: clients, id: clients.clientId },
  resources: { table: resources, id: resources.id },
} as const;

/** Identifiers per kind: client ids, resource ids, user `sub`s. */
export type RegistryIds = Record<RegistryKind, readonly string[]>;

/**
 * Disables every enabled entry whose id is not in `keep` (the seed file names it no longer), at
 * `now`; of the users, only those the seed manages. Returns the ids it disabled, per kind, sorted; entries already disabled are not repeated.
 */
export async function disableEntriesNotIn(
  db: AppDatabase,
  keep: RegistryIds,
  now: number,
): Promise<Record<RegistryKind, string[]>> {
  const disabled = { clients: [] as string[], resources: [] as string[], users: [] as string[] };
  await db.transaction(async (tx) => {
    for (const kind of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
      const { table, id } = TABLES[kind];
      // Clients that registered themselves (RFC 7591) are not the seed's to disable.
      const seedOwned = kind === 'clients' ? isNull(clients.registeredAt) : undefined;
      const rows = await tx
        .update(table)
        .set({ disabledAt: now })
        .where(and(isNull(table.disabledAt), notInArray(id, [...keep[kind]]), seedOwned))
        .returning({ id });
      disabled[kind] = rows.map((row) => row.id).sort();
    }
    // Users the operator keeps, or that an operator disabled, are not the seed's (src/accounts/drizzle/user-ownership.ts).
    disabled.users = await disableSeedUsersNotIn(tx, keep.users, now);
  });
  return disabled;
}

/**
 * Disables (`at` a time) or enables (`at` null) one entry, as an operator. Returns whether a row
 * changed state (false for an unknown id, or one already in that state). For a user it also records
 * that the operator did it, so the next start keeps it (src/accounts/drizzle/user-ownership.ts).
 */
export async function setEntryDisabled(
  db: AppDatabase,
  kind: RegistryKind,
  entryId: string,
  at: number | null,
): Promise<boolean> {
  if (kind === 'users') return setUserDisabledByOperator(db, entryId, at);
  const { table, id } = TABLES[kind];
  const rows = await db
    .update(table)
    .set({ disabledAt: at })
    .where(and(eq(id, entryId), at === null ? isNotNull(table.disabledAt) : isNull(table.disabledAt)))
    .returning({ id });
  return rows.length > 0;
}
