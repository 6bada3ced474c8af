import { and, eq, inArray, isNotNull, isNull, notInArray, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { users } from '../../db/schema.js';

/**
 * Who keeps a user, so the seed file and the operator's `users` commands do not undo each other
 * at the next start. `users.managed_by`: the seed disables only the users it manages and no longer
 * names; a user from `users add` is the operator's and the seed leaves it alone. `users.disabled_by`:
 * the seed re-enables only the users it disabled itself, never one an operator disabled.
 * `users.seed_fingerprint`: the seed writes an entry's attributes (password, name, email, factors)
 * only when the entry differs from the one it applied last, so a `users reset-password` (or a
 * password the user changed) holds until the file's entry itself changes.
 */

export type UserManager = 'seed' | 'operator';

/** The fingerprint recorded for each of `subs` (null: never applied); unknown subs are absent. */
export async function appliedSeedFingerprints(
  db: AppDatabase,
  subs: readonly string[],
): Promise<Map<string, string | null>> {
  if (subs.length === 0) return new Map();
  const rows = await db
    .select({ sub: users.sub, fingerprint: users.seedFingerprint })
    .from(users)
    .where(inArray(users.sub, [...subs]));
  return new Map(rows.map((row) => [row.sub, row.fingerprint]));
}

/**
 * After the seed wrote the entries in `applied`: records their fingerprints, makes every user the
 * file names the seed's again (a user the operator took over returns to the file that names it),
 * and re-enables those the seed had disabled. Returns the re-enabled subs, sorted.
 */
export async function claimSeedUsers(
  db: AppDatabase,
  named: readonly string[],
  applied: ReadonlyMap<string, string>,
): Promise<string[]> {
  if (named.length === 0) return [];
  return db.transaction(async (tx) => {
    for (const [sub, fingerprint] of applied) {
      await tx.update(users).set({ seedFingerprint: fingerprint }).where(eq(users.sub, sub));
    }
    await tx
      .update(users)
      .set({ managedBy: 'seed' })
      .where(inArray(users.sub, [...named]));
    const enabled = await tx
      .update(users)
      .set({ disabledAt: null, disabledBy: null })
      .where(and(inArray(users.sub, [...named]), eq(users.disabledBy, 'seed')))
      .returning({ sub: users.sub });
    return enabled.map((row) => row.sub).sort();
  });
}

/**
 * The seed's half of "the file is the truth": disables, at `now`, every enabled user the seed
 * manages that `named` leaves out. Returns their subs, sorted.
 */
export async function disableSeedUsersNotIn(
  db: AppDatabase,
  named: readonly string[],
  now: number,
): Promise<string[]> {
  const rows = await db
    .update(users)
    .set({ disabledAt: now, disabledBy: 'seed' })
    .where(and(isNull(users.disabledAt), eq(users.managedBy, 'seed'), notInArray(users.sub, [...named])))
    .returning({ sub: users.sub });
  return rows.map((row) => row.sub).sort();
}

/**
 * The operator's switch (`users disable|enable`): disables at `at`, or enables (`at` null).
 * Enabling a user the seed disabled (or one disabled before `disabled_by` was recorded) hands it
 * to the operator, so the next start does not disable it again; the seed takes it back when its
 * file names it. Returns whether the user changed state.
 */
export async function setUserDisabledByOperator(
  db: AppDatabase,
  sub: string,
  at: number | null,
): Promise<boolean> {
  const rows =
    at === null
      ? await db
          .update(users)
          .set({
            disabledAt: null,
            disabledBy: null,
            managedBy: sql`case when ${users.disabledBy} = 'operator' then ${users.managedBy} else 'operator' end`,
          })
          .where(and(eq(users.sub, sub), isNotNull(users.disabledAt)))
          .returning({ sub: users.sub })
      : await db
          .update(users)
          .set({ disabledAt: at, disabledBy: 'operator' })
          .where(and(eq(users.sub, sub), isNull(users.disabledAt)))
          .returning({ sub: users.sub });
  return rows.length > 0;
}
