import { and, eq, getTableColumns, getTableName, isNull, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { AppDatabase } from '../../db/client.js';
import { consents, passkeyCredentials, recoveryCodes, totpCredentials, users } from '../../db/schema.js';
import type { SignInSubject } from '../../interaction/authorization-flow.js';
import { lazy } from '../../storage/drizzle/prepared-statements.js';
import { userFromRow } from './user-store.js';

/** The outer query's `users.sub`, qualified (see `factorExists`). */
const outerUserSub = sql`${sql.identifier(getTableName(users))}."sub"`;

/**
 * `exists` a row of `table` for the outer `users` row. Written with explicit aliases: in a
 * one-table select Drizzle renders columns unqualified, and `"sub" = "sub"` inside the subquery
 * would compare the factor table with itself.
 */
function factorExists(table: PgTable, condition: SQL) {
  return sql<boolean>`exists (select 1 from ${table} as "factor" where "factor"."sub" = ${outerUserSub} ${condition})`;
}

/**
 * Every step of a sign-in asks who the session's user is, which second factors they have (the
 * level the request needs depends on both) and what they approved for the client (whether to ask
 * for consent). One prepared statement answers all three: the user row, one `exists` per factor
 * on the factor table's `sub` index, and the consent row by its primary key. A disabled account
 * is not found, as `findUserBySub` finds none.
 */
export function createSignInSubjectReader(db: AppDatabase) {
  const sub = sql.placeholder('sub');
  const statement = lazy(() =>
    db
      .select({
        ...getTableColumns(users),
        otp: factorExists(totpCredentials, sql`and "factor"."confirmed_at" is not null`),
        passkey: factorExists(passkeyCredentials, sql``),
        recoveryCodes: factorExists(recoveryCodes, sql`and "factor"."used_at" is null`),
        rememberedScopes: sql<
          string[]
        >`coalesce((select "consent"."scopes" from ${consents} as "consent" where "consent"."sub" = ${outerUserSub} and "consent"."client_id" = ${sql.placeholder('clientId')}), '{}')`,
      })
      .from(users)
      .where(and(eq(users.sub, sub), isNull(users.disabledAt)))
      .limit(1)
      .prepare('auth_sign_in_subject'),
  );
  return async function signInSubject(subject: string, clientId: string): Promise<SignInSubject | null> {
    const [row] = await statement().execute({ sub: subject, clientId });
    if (row === undefined) return null;
    const { otp, passkey, recoveryCodes: recovery, rememberedScopes, ...user } = row;
    return { user: userFromRow(user), enrolled: { otp, passkey, recoveryCodes: recovery }, rememberedScopes };
  };
}
