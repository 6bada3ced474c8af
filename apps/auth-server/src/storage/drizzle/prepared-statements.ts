import type { AuthorizationCode, Grant, IssuedTokenRecords } from '@oidc-orders/oauth-core';
import { and, eq, getTableColumns, isNull, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import {
  selectAccessTokenWithUser,
  selectCodeWithGrantAndUser,
  selectRefreshTokenWithGrantAndUser,
} from '../../accounts/drizzle/account-joins.js';
import type { AppDatabase } from '../../db/client.js';
import {
  accessTokens,
  authorizationCodes,
  grants,
  refreshTokens,
  revokedJwtAccessTokens,
} from '../../db/schema.js';

// ─── Redemption fast paths ───────────────────────────────────────────────────────────────────────
// A refresh used to cost seven round trips (three reads, BEGIN, UPDATE, INSERT, COMMIT) on a
// 10-connection pool; under load each one waits for a connection and for the CPU. These are two: one
// read joining the code or token with its grant and user, and one statement for consume + inserts.
// They are prepared statements with fixed names, so PostgreSQL parses and plans each once per pooled
// connection and drizzle builds its SQL once per store set.

/** Built on first use, then reused: one set per store set (the pool's, or one transaction's). */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

export type RedemptionStatements = ReturnType<typeof createRedemptionStatements>;
export type HotPathStatements = ReturnType<typeof createHotPathStatements>;

/**
 * The single-row reads and the insert of the token endpoint, introspection and UserInfo, prepared
 * (built once per store set, planned once per connection). Each returns what the builder query it
 * replaces returned: the same rows and column mapping.
 */
export function createHotPathStatements(db: AppDatabase) {
  const hash = sql.placeholder('hash');
  const p = (name: string) => sql.placeholder(name);
  return {
    findGrant: lazy(() =>
      db
        .select()
        .from(grants)
        .where(eq(grants.id, p('id')))
        .limit(1)
        .prepare('auth_find_grant'),
    ),
    findAuthorizationCode: lazy(() =>
      db
        .select()
        .from(authorizationCodes)
        .where(eq(authorizationCodes.codeHash, hash))
        .limit(1)
        .prepare('auth_find_authorization_code'),
    ),
    findRefreshToken: lazy(() =>
      db
        .select()
        .from(refreshTokens)
        .where(eq(refreshTokens.tokenHash, hash))
        .limit(1)
        .prepare('auth_find_refresh_token'),
    ),
    findAccessToken: lazy(() =>
      db
        .select()
        .from(accessTokens)
        .where(eq(accessTokens.tokenHash, hash))
        .limit(1)
        .prepare('auth_find_access_token'),
    ),
    findAccessTokenWithUser: lazy(() =>
      selectAccessTokenWithUser(db)
        .where(eq(accessTokens.tokenHash, hash))
        .limit(1)
        .prepare('auth_find_access_token_with_user'),
    ),
    createAccessToken: lazy(() =>
      db
        .insert(accessTokens)
        .values({
          tokenHash: p('tokenHash'),
          grantId: p('grantId'),
          clientId: p('clientId'),
          sub: p('sub'),
          scopes: p('scopes'),
          audience: p('audience'),
          issuedAt: p('issuedAt'),
          expiresAt: p('expiresAt'),
          revokedAt: p('revokedAt'),
          dpopJkt: p('dpopJkt'),
          claims: p('claims'),
        })
        .prepare('auth_create_access_token'),
    ),
    isJwtRevoked: lazy(() =>
      db
        .select({ jti: revokedJwtAccessTokens.jti })
        .from(revokedJwtAccessTokens)
        .where(eq(revokedJwtAccessTokens.jti, p('jti')))
        .limit(1)
        .prepare('auth_is_jwt_access_token_revoked'),
    ),
  };
}

export function createRedemptionStatements(db: AppDatabase) {
  const hash = sql.placeholder('hash');
  const consumeStatements = new Map<string, ReturnType<typeof prepareConsumeAndStore>>();
  return {
    refreshTokenWithGrantAndUser: lazy(() =>
      selectRefreshTokenWithGrantAndUser(db)
        .where(eq(refreshTokens.tokenHash, hash))
        .limit(1)
        .prepare('auth_refresh_token_with_grant_and_user'),
    ),
    codeWithGrantAndUser: lazy(() =>
      selectCodeWithGrantAndUser(db)
        .where(eq(authorizationCodes.codeHash, hash))
        .limit(1)
        .prepare('auth_code_with_grant_and_user'),
    ),
    /**
     * A new grant and its first code, one statement and so one transaction: `with new_grant as
     * (insert into grants … select $g_…) insert into authorization_codes … select $c_…`.
     */
    createCodeWithGrant: lazy(() => {
      const newGrant = db.$with('new_grant').as(db.insert(grants).select(selectPlaceholders(grants, 'g')));
      return db
        .with(newGrant)
        .insert(authorizationCodes)
        .select(selectPlaceholders(authorizationCodes, 'c'))
        .prepare('auth_create_code_with_grant');
    }),
    /** One statement per (what is consumed, which rows are inserted), built once each. */
    consume(kind: 'refresh' | 'code', withRefresh: boolean, withAccess: boolean) {
      const name = `auth_consume_${kind}${withRefresh ? '_rt' : ''}${withAccess ? '_at' : ''}`;
      let statement = consumeStatements.get(name);
      if (!statement) {
        statement = prepareConsumeAndStore(db, name, kind, withRefresh, withAccess);
        consumeStatements.set(name, statement);
      }
      return statement;
    },
  };
}

/**
 * `WITH used AS (conditional UPDATE … RETURNING) [, INSERT … SELECT … FROM used]* SELECT count(*)
 * FROM used`: the inserts take their rows from `used`, so they write only when the update won.
 * Under READ COMMITTED a concurrent caller blocks on the row lock, re-checks the WHERE clause once
 * the winner commits, updates nothing and therefore inserts nothing. One statement is one
 * transaction, so there is no BEGIN/COMMIT round trip either. Built with Drizzle's query builder
 * (data-modifying CTEs, INSERT … SELECT): the column lists come from the table definitions.
 */
/** `returning 1`: `used` has one row when the update won, none otherwise. */
const WON_ROW = { won: sql<number>`1`.as('won') };

function prepareConsumeAndStore(
  db: AppDatabase,
  name: string,
  kind: 'refresh' | 'code',
  withRefresh: boolean,
  withAccess: boolean,
) {
  const p = (placeholder: string) => sql.placeholder(placeholder);
  const used = db.$with('used').as(
    kind === 'refresh'
      ? // RFC 9700 §4.14.2: exactly one caller may rotate a given refresh token.
        db
          .update(refreshTokens)
          .set({
            usedAt: sql`${p('at')}::bigint`,
            // The parent names its successor in the same row version (findRefreshTokenSuccessor).
            ...(withRefresh ? { successorHash: sql`${p('rt_tokenHash')}::text` } : {}),
          })
          .where(
            and(
              eq(refreshTokens.tokenHash, sql`${p('hash')}::text`),
              isNull(refreshTokens.usedAt),
              isNull(refreshTokens.revokedAt),
            ),
          )
          .returning(WON_ROW)
      : // RFC 6749 §10.5: codes are single-use.
        db
          .update(authorizationCodes)
          .set({ usedAt: sql`${p('at')}::bigint` })
          .where(
            and(eq(authorizationCodes.codeHash, sql`${p('hash')}::text`), isNull(authorizationCodes.usedAt)),
          )
          .returning(WON_ROW),
  );
  const inserts = [
    ...(withRefresh
      ? [
          db
            .$with('new_refresh_token')
            .as(db.insert(refreshTokens).select(selectPlaceholders(refreshTokens, 'rt', 'used'))),
        ]
      : []),
    ...(withAccess
      ? [
          db
            .$with('new_access_token')
            .as(db.insert(accessTokens).select(selectPlaceholders(accessTokens, 'at', 'used'))),
        ]
      : []),
  ];
  return db
    .with(used, ...inserts)
    .select({ won: sql<number>`count(*)::int` })
    .from(used)
    .prepare(name);
}

/**
 * `select $rt_tokenHash::text, $rt_grantId::text, … [from used]`: one typed placeholder per
 * column, in the table's column order, which is the order of Drizzle's `insert into t (…)` list.
 * With `from`, one row per row of that CTE (none when it has none).
 */
function selectPlaceholders(table: PgTable, prefix: string, from?: string) {
  const values = Object.entries(getTableColumns(table)).map(
    ([key, column]) => sql`${sql.placeholder(`${prefix}_${key}`)}::${sql.raw(column.getSQLType())}`,
  );
  const select = sql`select ${sql.join(values, sql`, `)}`;
  return from === undefined ? select : sql`${select} from ${sql.identifier(from)}`;
}

/** One column of a row given as placeholders: its key in the record, its placeholder's name. */
interface PlaceholderColumn {
  key: string;
  placeholder: string;
  jsonb: boolean;
}

const placeholderColumnsByTable = new WeakMap<PgTable, Map<string, readonly PlaceholderColumn[]>>();

/** `table`'s columns as `placeholderValues` reads them, worked out once per table and prefix. */
function placeholderColumns(table: PgTable, prefix: string): readonly PlaceholderColumn[] {
  let byPrefix = placeholderColumnsByTable.get(table);
  if (!byPrefix) {
    byPrefix = new Map();
    placeholderColumnsByTable.set(table, byPrefix);
  }
  let columns = byPrefix.get(prefix);
  if (!columns) {
    columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({
      key,
      placeholder: `${prefix}_${key}`,
      jsonb: column.getSQLType() === 'jsonb',
    }));
    byPrefix.set(prefix, columns);
  }
  return columns;
}

/**
 * The placeholder values for one row of `table`, read from the record by column key, added to
 * `values`. Every token request and sign-in fills one or two rows: the column list is worked out
 * once (`placeholderColumns`), not read from the table definition on every call.
 */
function placeholderValues(
  table: PgTable,
  prefix: string,
  record: object,
  values: Record<string, unknown>,
): Record<string, unknown> {
  for (const { key, placeholder, jsonb } of placeholderColumns(table, prefix)) {
    const value = (record as Record<string, unknown>)[key];
    // Serialised here, as drizzle's jsonb column does: both drivers pass a string through.
    values[placeholder] = jsonb ? JSON.stringify(value) : Array.isArray(value) ? [...value] : (value ?? null);
  }
  return values;
}

/** Stores a new grant and its first code in one prepared statement. */
export async function createCodeWithGrant(
  statements: RedemptionStatements,
  grant: Grant,
  code: AuthorizationCode,
): Promise<void> {
  const values = placeholderValues(grants, 'g', grant, {});
  await statements.createCodeWithGrant().execute(placeholderValues(authorizationCodes, 'c', code, values));
}

export async function consumeAndStore(
  statements: RedemptionStatements,
  kind: 'refresh' | 'code',
  hash: string,
  at: number,
  issued: IssuedTokenRecords,
): Promise<boolean> {
  const { refreshToken, accessToken } = issued;
  const values: Record<string, unknown> = { hash, at };
  if (refreshToken !== null) placeholderValues(refreshTokens, 'rt', refreshToken, values);
  if (accessToken !== null) placeholderValues(accessTokens, 'at', accessToken, values);
  const [result] = await statements
    .consume(kind, refreshToken !== null, accessToken !== null)
    .execute(values);
  return Number(result?.won) === 1;
}
