import type { EnrolledFactors, User } from '@oidc-orders/oauth-core';
import { and, eq, getTableColumns, getTableName, isNull, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { AppDatabase } from '../../db/client.js';
import { passkeyCredentials, recoveryCodes, totpCredentials, users } from '../../db/schema.js';
import { lazy } from '../../storage/drizzle/prepared-statements.js';
import { userFromRow } from './user-store.js';

/** The account a session names, with the second factors it has enrolled. */
export interface SignInSubject {
  user: User;
  enrolled: EnrolledFactors;
}

/**
 * Every step of a sign-in asks who the session's user is and which second factors they have
 * (the level the request needs depends on both). One prepared statement answers both: the user
 * row, and one `exists` per factor, each on the factor table's `sub` index. A disabled account is
 * not found, as `findUserBySub` finds none.
 */
/**
 * `exists` a row of `table` for the outer `users` row. Written with explicit aliases: in a
 * one-table select Drizzle renders columns unqualified, and `"sub" = "sub"` inside the subquery
 * would compare the factor table with itself.
 */
function factorExists(table: PgTable, condition: SQL) {
  return sql<boolean>`exists (select 1 from ${table} as "factor" where "factor"."sub" = ${sql.identifier(getTableName(users))}."sub" ${condition})`;
}

export function createSignInSubjectReader(db: AppDatabase) {
  const sub = sql.placeholder('sub');
  const statement = lazy(() =>
    db
      .select({
        ...getTableColumns(users),
        otp: factorExists(totpCredentials, sql`and "factor"."confirmed_at" is not null`),
        passkey: factorExists(passkeyCredentials, sql``),
        recoveryCodes: factorExists(recoveryCodes, sql`and "factor"."used_at" is null`),
      })
      .from(users)
      .where(and(eq(users.sub, sub), isNull(users.disabledAt)))
      .limit(1)
      .prepare('auth_sign_in_subject'),
  );
  return async function signInSubject(subject: string): Promise<SignInSubject | null> {
    const [row] = await statement().execute({ sub: subject });
    if (row === undefined) return null;
    const { otp, passkey, recoveryCodes: recovery, ...user } = row;
    return { user: userFromRow(user), enrolled: { otp, passkey, recoveryCodes: recovery } };
  };
}
