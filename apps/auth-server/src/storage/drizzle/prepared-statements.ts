import type { IssuedTokenRecords } from '@oidc-orders/oauth-core';
import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
import type { AppDatabase } from '../../db/client.js';
import {
  accessTokens,
  authorizationCodes,
  grants,
  refreshTokens,
  revokedJwtAccessTokens,
  users,
} from '../../db/schema.js';

// ─── Redemption fast paths ───────────────────────────────────────────────────────────────────────
// A refresh used to cost seven round trips (three reads, BEGIN, UPDATE, INSERT, COMMIT) on a
// 10-connection pool; under load each one waits for a connection and for the CPU. These are two: one
// read joining the code or token with its grant and user, and one statement for consume + inserts.
// They are prepared statements with fixed names, so PostgreSQL parses and plans each once per pooled
// connection and drizzle builds its SQL once per store set.

const dialect = new PgDialect();

type Rows = { rows: Array<Record<string, unknown>> };

/** Prepares raw SQL with `sql.placeholder`s through the session (node-postgres or PGlite alike). */
function prepareRaw(
  db: AppDatabase,
  name: string,
  query: SQL,
): PgPreparedQuery<PreparedQueryConfig & { execute: Rows }> {
  return db._.session.prepareQuery<PreparedQueryConfig & { execute: Rows }>(
    dialect.sqlToQuery(query),
    undefined,
    name,
    false,
  );
}

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
  const consumeStatements = new Map<string, ReturnType<typeof prepareRaw>>();
  return {
    refreshTokenWithGrantAndUser: lazy(() =>
      db
        .select({ token: refreshTokens, grant: grants, user: users })
        .from(refreshTokens)
        .leftJoin(grants, eq(grants.id, refreshTokens.grantId))
        // A disabled user joins as null, as `findUserBySub` would find none.
        .leftJoin(users, and(eq(users.sub, refreshTokens.sub), isNull(users.disabledAt)))
        .where(eq(refreshTokens.tokenHash, hash))
        .limit(1)
        .prepare('auth_refresh_token_with_grant_and_user'),
    ),
    codeWithGrantAndUser: lazy(() =>
      db
        .select({ code: authorizationCodes, grant: grants, user: users })
        .from(authorizationCodes)
        .leftJoin(grants, eq(grants.id, authorizationCodes.grantId))
        .leftJoin(users, and(eq(users.sub, authorizationCodes.sub), isNull(users.disabledAt)))
        .where(eq(authorizationCodes.codeHash, hash))
        .limit(1)
        .prepare('auth_code_with_grant_and_user'),
    ),
    /** One statement per (what is consumed, which rows are inserted), built once each. */
    consume(kind: 'refresh' | 'code', withRefresh: boolean, withAccess: boolean) {
      const name = `auth_consume_${kind}${withRefresh ? '_rt' : ''}${withAccess ? '_at' : ''}`;
      let statement = consumeStatements.get(name);
      if (!statement) {
        statement = prepareRaw(db, name, consumeAndStoreSql(kind, withRefresh, withAccess));
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
 * transaction, so there is no BEGIN/COMMIT round trip either.
 */
function consumeAndStoreSql(kind: 'refresh' | 'code', withRefresh: boolean, withAccess: boolean): SQL {
  const p = (name: string) => sql.placeholder(name);
  const parts: SQL[] = [
    kind === 'refresh'
      ? // RFC 9700 §4.14.2: exactly one caller may rotate a given refresh token.
        sql`with used as (
          update ${refreshTokens} set used_at = ${p('at')}::bigint
          where token_hash = ${p('hash')}::text and used_at is null and revoked_at is null
          returning 1)`
      : // RFC 6749 §10.5: codes are single-use.
        sql`with used as (
          update ${authorizationCodes} set used_at = ${p('at')}::bigint
          where code_hash = ${p('hash')}::text and used_at is null
          returning 1)`,
  ];
  if (withRefresh) {
    parts.push(sql`, new_refresh_token as (
      insert into ${refreshTokens} (token_hash, grant_id, client_id, sub, scopes, resources, parent_hash,
        created_at, expires_at, used_at, revoked_at, dpop_jkt)
      select ${p('rtHash')}::text, ${p('rtGrantId')}::text, ${p('rtClientId')}::text, ${p('rtSub')}::text,
        ${p('rtScopes')}::text[], ${p('rtResources')}::text[], ${p('rtParentHash')}::text,
        ${p('rtCreatedAt')}::bigint, ${p('rtExpiresAt')}::bigint, ${p('rtUsedAt')}::bigint,
        ${p('rtRevokedAt')}::bigint, ${p('rtDpopJkt')}::text
      from used)`);
  }
  if (withAccess) {
    parts.push(sql`, new_access_token as (
      insert into ${accessTokens} (token_hash, grant_id, client_id, sub, scopes, audience, issued_at,
        expires_at, revoked_at, dpop_jkt, claims)
      select ${p('atHash')}::text, ${p('atGrantId')}::text, ${p('atClientId')}::text, ${p('atSub')}::text,
        ${p('atScopes')}::text[], ${p('atAudience')}::text[], ${p('atIssuedAt')}::bigint,
        ${p('atExpiresAt')}::bigint, ${p('atRevokedAt')}::bigint, ${p('atDpopJkt')}::text, ${p('atClaims')}::jsonb
      from used)`);
  }
  parts.push(sql` select count(*)::int as won from used`);
  return sql.join(parts);
}

export async function consumeAndStore(
  statements: RedemptionStatements,
  kind: 'refresh' | 'code',
  hash: string,
  at: number,
  issued: IssuedTokenRecords,
): Promise<boolean> {
  const { refreshToken: rt, accessToken: token } = issued;
  const values: Record<string, unknown> = { hash, at };
  if (rt !== null) {
    Object.assign(values, {
      rtHash: rt.tokenHash,
      rtGrantId: rt.grantId,
      rtClientId: rt.clientId,
      rtSub: rt.sub,
      rtScopes: [...rt.scopes],
      rtResources: [...rt.resources],
      rtParentHash: rt.parentHash,
      rtCreatedAt: rt.createdAt,
      rtExpiresAt: rt.expiresAt,
      rtUsedAt: rt.usedAt,
      rtRevokedAt: rt.revokedAt,
      rtDpopJkt: rt.dpopJkt,
    });
  }
  if (token !== null) {
    Object.assign(values, {
      atHash: token.tokenHash,
      atGrantId: token.grantId,
      atClientId: token.clientId,
      atSub: token.sub,
      atScopes: [...token.scopes],
      atAudience: [...token.audience],
      atIssuedAt: token.issuedAt,
      atExpiresAt: token.expiresAt,
      atRevokedAt: token.revokedAt,
      atDpopJkt: token.dpopJkt,
      // Serialised here, as drizzle's jsonb column does: both drivers pass a string through.
      atClaims: JSON.stringify(token.claims),
    });
  }
  const result = await statements.consume(kind, rt !== null, token !== null).execute(values);
  return Number(result.rows[0]?.won) === 1;
}
