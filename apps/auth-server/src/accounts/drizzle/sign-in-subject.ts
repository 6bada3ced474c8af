import { type AnyColumn, and, eq, getTableColumns, getTableName, isNull, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { AppDatabase } from '../../db/client.js';
import { consents, passkeyCredentials, recoveryCodes, totpCredentials, users } from '../../db/schema.js';
import { lazy } from '../../storage/drizzle/prepared-statements.js';
import type { SignInSubject } from '../account-store.js';
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
 * What a step needs beside the user row of a query that selects from (or joins) `users`: one
 * `exists` per second factor on the factor table's `sub` index, and the scopes remembered for
 * `clientId` (the consent row by its primary key). The interaction pages' guard joins them to the
 * interaction it reads (`findActiveWithSession`), with the client id of the stored request.
 */
export function signInSubjectColumns(clientId: SQL) {
  return {
    otp: factorExists(totpCredentials, sql`and "factor"."confirmed_at" is not null`),
    passkey: factorExists(passkeyCredentials, sql``),
    recoveryCodes: factorExists(recoveryCodes, sql`and "factor"."used_at" is null`),
    rememberedScopes: sql<
      string[]
    >`coalesce((select "consent"."scopes" from ${consents} as "consent" where "consent"."sub" = ${outerUserSub} and "consent"."client_id" = ${clientId}), '{}')`,
  };
}

/**
 * The sign-in subject of the account `sub` names, for a query of another module to left-join
 * (`from … left join {table} on {on}`, selecting `columns`): the interaction pages' guard reads it
 * with the interaction and its session. A disabled account joins nothing, as the reader finds none.
 */
export function signInSubjectJoin(sub: AnyColumn, clientId: SQL) {
  return {
    table: users,
    on: and(eq(users.sub, sub), isNull(users.disabledAt)),
    columns: { user: getTableColumns(users), ...signInSubjectColumns(clientId) },
  };
}

type SubjectExtras = {
  [K in keyof ReturnType<typeof signInSubjectColumns>]: ReturnType<
    typeof signInSubjectColumns
  >[K]['_']['type'];
};

/** A `SignInSubject` from the user row and the columns of `signInSubjectColumns`. */
export function signInSubjectFromRow(user: typeof users.$inferSelect, extras: SubjectExtras): SignInSubject {
  const { otp, passkey, recoveryCodes: recovery, rememberedScopes } = extras;
  return {
    user: userFromRow(user),
    enrolled: { otp, passkey, recoveryCodes: recovery },
    rememberedScopes,
  };
}

/**
 * Every step of a sign-in asks who the session's user is, which second factors they have (the
 * level the request needs depends on both) and what they approved for the client (whether to ask
 * for consent). One prepared statement answers all three. A disabled account is not found, as
 * `findUserBySub` finds none.
 */
export function createSignInSubjectReader(db: AppDatabase) {
  const statement = lazy(() =>
    db
      .select({ user: getTableColumns(users), ...signInSubjectColumns(sql`${sql.placeholder('clientId')}`) })
      .from(users)
      .where(and(eq(users.sub, sql.placeholder('sub')), isNull(users.disabledAt)))
      .limit(1)
      .prepare('auth_sign_in_subject'),
  );
  return async function signInSubject(subject: string, clientId: string): Promise<SignInSubject | null> {
    const [row] = await statement().execute({ sub: subject, clientId });
    if (row === undefined) return null;
    const { user, ...extras } = row;
    return signInSubjectFromRow(user, extras);
  };
}
