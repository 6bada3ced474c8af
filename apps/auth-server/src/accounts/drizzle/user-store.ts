import type { User, UserStore } from '@oidc-orders/oauth-core';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { users } from '../../db/schema.js';
import { lazy } from '../../storage/drizzle/prepared-statements.js';

/** A disabled user (`disabled_at` set) is not found: sign-in, refresh, UserInfo and tokens refuse it. */
export function createUserStore(db: AppDatabase): UserStore {
  // A user by one unique column, prepared: the sign-in asks by username, every token by `sub`.
  const enabledUserBy = (column: typeof users.sub | typeof users.username, name: string) =>
    lazy(() =>
      db
        .select()
        .from(users)
        .where(and(eq(column, sql.placeholder('key')), isNull(users.disabledAt)))
        .limit(1)
        .prepare(name),
    );
  const findBySub = enabledUserBy(users.sub, 'auth_find_user_by_sub');
  const findByUsername = enabledUserBy(users.username, 'auth_find_user_by_username');
  return {
    async findUserBySub(sub) {
      const [row] = await findBySub().execute({ key: sub });
      return row ? userFromRow(row) : null;
    },
    async findUserByUsername(username) {
      // Exact, case-sensitive match (text equality in the default collation).
      const [row] = await findByUsername().execute({ key: username });
      return row ? userFromRow(row) : null;
    },
  };
}

export function userFromRow(row: typeof users.$inferSelect): User {
  return {
    sub: row.sub,
    username: row.username,
    passwordHash: row.passwordHash,
    name: row.name,
    email: row.email,
    emailVerified: row.emailVerified,
    allowedScopes: row.allowedScopes,
    mfaRequired: row.mfaRequired,
    // Only users a directory or an upstream speaks for have groups; others have no `groups` at all.
    ...(row.groups === null ? {} : { groups: row.groups }),
    // Absent until a sign-in records it (the next sign-in then writes it).
    ...(row.locale === null ? {} : { locale: row.locale }),
  };
}
