import type {
  AccessTokenStore,
  AuthorizationCode,
  AuthorizationCodeStore,
  Client,
  ClientAuthenticationMethod,
  ClientStore,
  DeviceCode,
  DeviceCodeStatus,
  DeviceCodeStore,
  Grant,
  GrantStore,
  GrantType,
  IssuedTokenRecords,
  KeyStore,
  OpaqueAccessToken,
  ProtocolStores,
  RefreshToken,
  RefreshTokenStore,
  Resource,
  ResourceStore,
  SigningAlg,
  SigningKeyRecord,
  TokenExchangePolicy,
  TokenStores,
  TokenTypeUri,
  User,
  UserStore,
} from '@oidc-orders/oauth-core';
import { and, eq, gt, isNull, lte, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
import type { AppDatabase } from '../db/client.js';
import {
  accessTokens,
  authorizationCodes,
  clients,
  deviceCodes,
  grants,
  refreshTokens,
  resources,
  revokedJwtAccessTokens,
  signingKeys,
  users,
} from '../db/schema.js';

/**
 * The oauth-core store contracts on Drizzle (node-postgres or PGlite). Every method is typed on
 * `PgDatabase`, so the same code runs on the pool and inside a transaction.
 *
 * Clients and resources form a small registry that changes only when the seed is applied; they are
 * read from an in-memory snapshot so the token endpoint (the hot path) costs no database round for
 * them. The snapshot is reloaded after `invalidateRegistry()` (called by the seed loader) or after
 * `registryTtlMs`, which bounds staleness when another instance reseeded.
 */
export interface DrizzleStores extends ProtocolStores {
  keys: KeyStore;
  invalidateRegistry(): void;
  /** Every client, from the snapshot (CORS origins are derived from it). */
  listClients(): Promise<readonly Client[]>;
}

export interface DrizzleStoresOptions {
  /** Upper bound on how long a registry snapshot is used; default 60 s. */
  registryTtlMs?: number;
  /** Monotonic milliseconds, injectable for tests. */
  nowMs?: () => number;
}

export function createDrizzleStores(db: AppDatabase, options: DrizzleStoresOptions = {}): DrizzleStores {
  const registry = createRegistrySnapshot(
    db,
    options.registryTtlMs ?? 60_000,
    options.nowMs ?? (() => performance.now()),
  );

  const clientStore: ClientStore = {
    async findClient(clientId) {
      return (await registry.get()).clients.get(clientId) ?? null;
    },
  };
  const resourceStore: ResourceStore = {
    async findResource(id) {
      return (await registry.get()).resources.get(id) ?? null;
    },
    async listResources() {
      return [...(await registry.get()).resources.values()];
    },
  };

  return {
    clients: clientStore,
    resources: resourceStore,
    users: createUserStore(db),
    ...createTokenStores(db, { inTransaction: false }),
    keys: createKeyStore(db),
    transaction: (work) => db.transaction((tx) => work(createTokenStores(tx, { inTransaction: true }))),
    invalidateRegistry: () => registry.invalidate(),
    listClients: async () => [...(await registry.get()).clients.values()],
  };
}

// ─── Registry writes (seed loader, store contract fixture) ───────────────────────────────────────

export interface RegistryRecords {
  clients?: readonly Client[];
  resources?: readonly Resource[];
  users?: readonly User[];
}

/**
 * Inserts or replaces clients, resources and users, all in one transaction. The caller invalidates
 * the registry snapshot of any stores reading this database (`invalidateRegistry`).
 */
export async function writeRegistryRecords(
  db: AppDatabase,
  records: RegistryRecords,
  now: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    for (const client of records.clients ?? []) {
      const row = {
        ...client,
        redirectUris: [...client.redirectUris],
        postLogoutRedirectUris: [...client.postLogoutRedirectUris],
        grantTypes: [...client.grantTypes],
        scopes: [...client.scopes],
        allowedCorsOrigins: [...client.allowedCorsOrigins],
        tokenExchange: tokenExchangeRow(client.tokenExchange),
        authMethods: [...(client.authMethods ?? [])],
        jwks: client.jwks == null ? null : { keys: [...client.jwks.keys] },
        jwksUri: client.jwksUri ?? null,
        requireSignedRequestObject: client.requireSignedRequestObject ?? false,
        profile: client.profile ?? null,
        // Writing an entry (the seed names it again) enables it.
        disabledAt: null,
        updatedAt: now,
      };
      await tx.insert(clients).values(row).onConflictDoUpdate({ target: clients.clientId, set: row });
    }
    for (const resource of records.resources ?? []) {
      const row = {
        ...resource,
        scopes: [...resource.scopes],
        claims: [...resource.claims],
        disabledAt: null,
        updatedAt: now,
      };
      await tx.insert(resources).values(row).onConflictDoUpdate({ target: resources.id, set: row });
    }
    for (const user of records.users ?? []) {
      const row = {
        ...user,
        allowedScopes: user.allowedScopes === null ? null : [...user.allowedScopes],
        disabledAt: null,
        updatedAt: now,
      };
      await tx.insert(users).values(row).onConflictDoUpdate({ target: users.sub, set: row });
    }
  });
}

// ─── Registry snapshot ───────────────────────────────────────────────────────────────────────────

interface Registry {
  clients: Map<string, Client>;
  resources: Map<string, Resource>;
}

function createRegistrySnapshot(db: AppDatabase, ttlMs: number, nowMs: () => number) {
  let loading: Promise<Registry> | undefined;
  let loadedAt = 0;
  let generation = 0;

  const load = async (): Promise<Registry> => {
    // Disabled entries (`disabled_at`, see registry-status.ts) are not part of the registry.
    const [clientRows, resourceRows] = await Promise.all([
      db.select().from(clients).where(isNull(clients.disabledAt)),
      db.select().from(resources).where(isNull(resources.disabledAt)),
    ]);
    return {
      clients: new Map(clientRows.map((row) => [row.clientId, clientFromRow(row)])),
      resources: new Map(resourceRows.map((row) => [row.id, resourceFromRow(row)])),
    };
  };

  return {
    get(): Promise<Registry> {
      if (!loading || nowMs() - loadedAt > ttlMs) {
        const started = ++generation;
        loadedAt = nowMs();
        loading = load();
        // A failed load (database down) must not be cached: the next request retries.
        loading.catch(() => {
          if (generation === started) loading = undefined;
        });
      }
      return loading;
    },
    invalidate() {
      generation++;
      loading = undefined;
    },
  };
}

function clientFromRow(row: typeof clients.$inferSelect): Client {
  return {
    clientId: row.clientId,
    clientName: row.clientName,
    secretHash: row.secretHash,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    // The seed loader only writes grant types from GRANT_TYPES (password/implicit are rejected there).
    grantTypes: row.grantTypes as GrantType[],
    scopes: row.scopes,
    skipConsent: row.skipConsent,
    idTokenSigningAlg: row.idTokenSigningAlg as SigningAlg,
    allowedCorsOrigins: row.allowedCorsOrigins,
    backchannelLogoutUri: row.backchannelLogoutUri,
    frontchannelLogoutUri: row.frontchannelLogoutUri,
    refreshTokensWithoutOfflineAccess: row.refreshTokensWithoutOfflineAccess,
    refreshTokenAbsoluteTtl: row.refreshTokenAbsoluteTtl,
    refreshTokenSlidingTtl: row.refreshTokenSlidingTtl,
    dpopBoundAccessTokens: row.dpopBoundAccessTokens,
    dpopNonceRequired: row.dpopNonceRequired,
    requirePushedAuthorizationRequests: row.requirePushedAuthorizationRequests,
    tokenExchange:
      row.tokenExchange === null
        ? null
        : {
            audiences: row.tokenExchange.audiences,
            scopes: row.tokenExchange.scopes,
            // The seed loader only writes RFC 8693 token type URIs.
            subjectTokenTypes: row.tokenExchange.subjectTokenTypes as TokenTypeUri[],
          },
    keepOfflineAccessOnLogout: row.keepOfflineAccessOnLogout,
    requireMfa: row.requireMfa,
    // The seed loader only writes ClientAuthenticationMethod values and the `fapi2` profile.
    authMethods: row.authMethods as ClientAuthenticationMethod[],
    jwks: row.jwks,
    jwksUri: row.jwksUri,
    requireSignedRequestObject: row.requireSignedRequestObject,
    profile: row.profile === 'fapi2' ? 'fapi2' : null,
  };
}

function tokenExchangeRow(policy: TokenExchangePolicy | null | undefined) {
  if (policy === null || policy === undefined) return null;
  return {
    audiences: [...policy.audiences],
    scopes: [...policy.scopes],
    subjectTokenTypes: [...policy.subjectTokenTypes],
  };
}

function resourceFromRow(row: typeof resources.$inferSelect): Resource {
  return {
    id: row.id,
    scopes: row.scopes,
    accessTokenFormat: row.accessTokenFormat === 'opaque' ? 'opaque' : 'jwt',
    accessTokenTtl: row.accessTokenTtl,
    accessTokenSigningAlg: row.accessTokenSigningAlg as SigningAlg,
    secretHash: row.secretHash,
    claims: row.claims,
    requireMfa: row.requireMfa,
  };
}

// ─── Users ───────────────────────────────────────────────────────────────────────────────────────

/** A disabled user (`disabled_at` set) is not found: sign-in, refresh, UserInfo and tokens refuse it. */
function createUserStore(db: AppDatabase): UserStore {
  const findBySub = lazy(() =>
    db
      .select()
      .from(users)
      .where(and(eq(users.sub, sql.placeholder('sub')), isNull(users.disabledAt)))
      .limit(1)
      .prepare('auth_find_user_by_sub'),
  );
  return {
    async findUserBySub(sub) {
      const [row] = await findBySub().execute({ sub });
      return row ? userFromRow(row) : null;
    },
    async findUserByUsername(username) {
      // Exact, case-sensitive match (text equality in the default collation).
      const [row] = await db
        .select()
        .from(users)
        .where(and(eq(users.username, username), isNull(users.disabledAt)))
        .limit(1);
      return row ? userFromRow(row) : null;
    },
  };
}

function userFromRow(row: typeof users.$inferSelect): User {
  return {
    sub: row.sub,
    username: row.username,
    passwordHash: row.passwordHash,
    name: row.name,
    email: row.email,
    emailVerified: row.emailVerified,
    allowedScopes: row.allowedScopes,
    mfaRequired: row.mfaRequired,
  };
}

// ─── Grants, codes and tokens ────────────────────────────────────────────────────────────────────

function createTokenStores(db: AppDatabase, context: { inTransaction: boolean }): TokenStores {
  const statements = createRedemptionStatements(db);
  const hot = createHotPathStatements(db);
  const revokeGrantRows = async (executor: AppDatabase, id: string, at: number) => {
    // Idempotent: a grant (or token) revoked earlier keeps its first revocation time.
    await executor
      .update(grants)
      .set({ revokedAt: at })
      .where(and(eq(grants.id, id), isNull(grants.revokedAt)));
    await executor
      .update(refreshTokens)
      .set({ revokedAt: at })
      .where(and(eq(refreshTokens.grantId, id), isNull(refreshTokens.revokedAt)));
    await executor
      .update(accessTokens)
      .set({ revokedAt: at })
      .where(and(eq(accessTokens.grantId, id), isNull(accessTokens.revokedAt)));
  };

  const grantStore: GrantStore = {
    async createGrant(grant) {
      await db.insert(grants).values({
        ...grant,
        scopes: [...grant.scopes],
        resources: [...grant.resources],
        amr: grant.amr ? [...grant.amr] : null,
      });
    },
    async findGrant(id) {
      const [row] = await hot.findGrant().execute({ id });
      return row ? grantFromRow(row) : null;
    },
    async findGrantsBySid(sid) {
      const rows = await db.select().from(grants).where(eq(grants.sid, sid));
      return rows.map(grantFromRow);
    },
    async revokeGrant(id, at) {
      // The contract asks for one unit of work: inside a caller's transaction that is already the
      // case; on its own it opens one.
      if (context.inTransaction) await revokeGrantRows(db, id, at);
      else await db.transaction((tx) => revokeGrantRows(tx, id, at));
    },
  };

  const codeStore: AuthorizationCodeStore = {
    async createAuthorizationCode(code) {
      await db
        .insert(authorizationCodes)
        .values({ ...code, scopes: [...code.scopes], resources: [...code.resources] });
    },
    async findAuthorizationCode(codeHash) {
      const [row] = await hot.findAuthorizationCode().execute({ hash: codeHash });
      return row ? codeFromRow(row) : null;
    },
    async consumeAuthorizationCode(codeHash, at) {
      // RFC 6749 §10.5: single use. One conditional UPDATE is atomic across processes: a
      // concurrent redeemer blocks on the row lock, re-checks `used_at IS NULL`, and loses.
      const won = await db
        .update(authorizationCodes)
        .set({ usedAt: at })
        .where(and(eq(authorizationCodes.codeHash, codeHash), isNull(authorizationCodes.usedAt)))
        .returning({ codeHash: authorizationCodes.codeHash });
      return won.length === 1;
    },
    async findAuthorizationCodeWithGrantAndUser(codeHash) {
      const [row] = await statements.codeWithGrantAndUser().execute({ hash: codeHash });
      if (!row) return null;
      return {
        code: codeFromRow(row.code),
        grant: row.grant ? grantFromRow(row.grant) : null,
        user: row.user ? userFromRow(row.user) : null,
      };
    },
    async redeemAuthorizationCode(codeHash, at, issued) {
      return consumeAndStore(statements, 'code', codeHash, at, issued);
    },
  };

  const refreshTokenStore: RefreshTokenStore = {
    async createRefreshToken(token) {
      await db
        .insert(refreshTokens)
        .values({ ...token, scopes: [...token.scopes], resources: [...token.resources] });
    },
    async findRefreshToken(tokenHash) {
      const [row] = await hot.findRefreshToken().execute({ hash: tokenHash });
      return row ? refreshTokenFromRow(row) : null;
    },
    async markRefreshTokenUsed(tokenHash, at) {
      // RFC 9700 §4.14.2 rotation: exactly one caller may rotate a given refresh token.
      const won = await db
        .update(refreshTokens)
        .set({ usedAt: at })
        .where(
          and(
            eq(refreshTokens.tokenHash, tokenHash),
            isNull(refreshTokens.usedAt),
            isNull(refreshTokens.revokedAt),
          ),
        )
        .returning({ tokenHash: refreshTokens.tokenHash });
      return won.length === 1;
    },
    async revokeRefreshToken(tokenHash, at) {
      await db
        .update(refreshTokens)
        .set({ revokedAt: at })
        .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.revokedAt)));
    },
    async findRefreshTokenWithGrantAndUser(tokenHash) {
      const [row] = await statements.refreshTokenWithGrantAndUser().execute({ hash: tokenHash });
      if (!row) return null;
      return {
        token: refreshTokenFromRow(row.token),
        grant: row.grant ? grantFromRow(row.grant) : null,
        user: row.user ? userFromRow(row.user) : null,
      };
    },
    async rotateRefreshToken(tokenHash, at, issued) {
      // RFC 9700 §4.14.2 in one statement: the conditional UPDATE and the inserts that depend on it
      // (see consumeAndStore).
      return consumeAndStore(statements, 'refresh', tokenHash, at, issued);
    },
  };

  const accessTokenStore: AccessTokenStore = {
    async createAccessToken(token) {
      // One INSERT, no transaction around it (client_credentials writes nothing else).
      await hot.createAccessToken().execute({
        ...token,
        scopes: [...token.scopes],
        audience: [...token.audience],
        claims: { ...token.claims },
      });
    },
    async findAccessToken(tokenHash) {
      // Introspection: one SELECT by primary key, never cached (revocation is visible at once).
      const [row] = await hot.findAccessToken().execute({ hash: tokenHash });
      return row ? accessTokenFromRow(row) : null;
    },
    async revokeAccessToken(tokenHash, at) {
      await db
        .update(accessTokens)
        .set({ revokedAt: at })
        .where(and(eq(accessTokens.tokenHash, tokenHash), isNull(accessTokens.revokedAt)));
    },
    async revokeJwtAccessToken(jti, expiresAt) {
      await db.insert(revokedJwtAccessTokens).values({ jti, expiresAt }).onConflictDoNothing();
    },
    async isJwtAccessTokenRevoked(jti) {
      const [row] = await hot.isJwtRevoked().execute({ jti });
      return row !== undefined;
    },
  };

  return {
    grants: grantStore,
    codes: codeStore,
    refreshTokens: refreshTokenStore,
    accessTokens: accessTokenStore,
    deviceCodes: createDeviceCodeStore(db),
  };
}

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
function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

type RedemptionStatements = ReturnType<typeof createRedemptionStatements>;

/**
 * The single-row reads and the insert of the token endpoint, introspection and UserInfo, prepared
 * (built once per store set, planned once per connection). Each returns what the builder query it
 * replaces returned: the same rows and column mapping.
 */
function createHotPathStatements(db: AppDatabase) {
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

function createRedemptionStatements(db: AppDatabase) {
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

async function consumeAndStore(
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

/**
 * RFC 8628 device authorizations. Every transition is one conditional UPDATE … RETURNING, so of
 * any number of racing requests exactly one moves the code on.
 */
function createDeviceCodeStore(db: AppDatabase): DeviceCodeStore {
  const pending = (hash: string, at: number) =>
    and(
      eq(deviceCodes.deviceCodeHash, hash),
      eq(deviceCodes.status, 'pending'),
      gt(deviceCodes.expiresAt, at),
    );
  return {
    async createDeviceCode(code) {
      // A user code already taken → nothing written, `false` (the caller draws another one).
      const inserted = await db
        .insert(deviceCodes)
        .values({
          deviceCodeHash: code.deviceCodeHash,
          userCodeHash: code.userCodeHash,
          clientId: code.clientId,
          scopes: [...code.scopes],
          resources: [...code.resources],
          createdAt: code.createdAt,
          expiresAt: code.expiresAt,
          pollInterval: code.interval,
          lastPolledAt: code.lastPolledAt,
          status: code.status,
          grantId: code.grantId,
          sub: code.sub,
          decidedAt: code.decidedAt,
          redeemedAt: code.redeemedAt,
        })
        .onConflictDoNothing({ target: deviceCodes.userCodeHash })
        .returning({ hash: deviceCodes.deviceCodeHash });
      return inserted.length === 1;
    },
    async findDeviceCode(deviceCodeHash) {
      const [row] = await db
        .select()
        .from(deviceCodes)
        .where(eq(deviceCodes.deviceCodeHash, deviceCodeHash))
        .limit(1);
      return row ? deviceCodeFromRow(row) : null;
    },
    async findDeviceCodeByUserCode(userCodeHash) {
      const [row] = await db
        .select()
        .from(deviceCodes)
        .where(eq(deviceCodes.userCodeHash, userCodeHash))
        .limit(1);
      return row ? deviceCodeFromRow(row) : null;
    },
    async approveDeviceCode(deviceCodeHash, { grantId, sub, at }) {
      const won = await db
        .update(deviceCodes)
        .set({ status: 'approved', grantId, sub, decidedAt: at })
        .where(pending(deviceCodeHash, at))
        .returning({ hash: deviceCodes.deviceCodeHash });
      return won.length === 1;
    },
    async denyDeviceCode(deviceCodeHash, { sub, at }) {
      const won = await db
        .update(deviceCodes)
        .set({ status: 'denied', sub, decidedAt: at })
        .where(pending(deviceCodeHash, at))
        .returning({ hash: deviceCodes.deviceCodeHash });
      return won.length === 1;
    },
    async recordDeviceCodePoll(deviceCodeHash, at) {
      // The row lock taken by FOR UPDATE makes a concurrent poll wait and then read this poll's
      // time as its "previous" one: no two polls see the same previous time.
      const result = await db.execute(sql`
        update ${deviceCodes} set last_polled_at = ${at}
        from (
          select device_code_hash, last_polled_at as previous_poll_at
          from ${deviceCodes} where device_code_hash = ${deviceCodeHash} for update
        ) as previous
        where ${deviceCodes}.device_code_hash = previous.device_code_hash
        returning previous.previous_poll_at, ${deviceCodes}.poll_interval`);
      const [row] = (
        result as unknown as { rows: Array<{ previous_poll_at: unknown; poll_interval: unknown }> }
      ).rows;
      if (!row) return null;
      return {
        previousPollAt: row.previous_poll_at === null ? null : Number(row.previous_poll_at),
        interval: Number(row.poll_interval),
      };
    },
    async increaseDeviceCodeInterval(deviceCodeHash, seconds) {
      await db
        .update(deviceCodes)
        .set({ pollInterval: sql`${deviceCodes.pollInterval} + ${seconds}` })
        .where(eq(deviceCodes.deviceCodeHash, deviceCodeHash));
    },
    async redeemDeviceCode(deviceCodeHash, at) {
      const won = await db
        .update(deviceCodes)
        .set({ status: 'redeemed', redeemedAt: at })
        .where(and(eq(deviceCodes.deviceCodeHash, deviceCodeHash), eq(deviceCodes.status, 'approved')))
        .returning({ hash: deviceCodes.deviceCodeHash });
      return won.length === 1;
    },
    async deleteExpiredDeviceCodes(before) {
      await db.delete(deviceCodes).where(lte(deviceCodes.expiresAt, before));
    },
  };
}

function deviceCodeFromRow(row: typeof deviceCodes.$inferSelect): DeviceCode {
  return {
    deviceCodeHash: row.deviceCodeHash,
    userCodeHash: row.userCodeHash,
    clientId: row.clientId,
    scopes: row.scopes,
    resources: row.resources,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    interval: row.pollInterval,
    lastPolledAt: row.lastPolledAt,
    status: row.status as DeviceCodeStatus,
    grantId: row.grantId,
    sub: row.sub,
    decidedAt: row.decidedAt,
    redeemedAt: row.redeemedAt,
  };
}

function grantFromRow(row: typeof grants.$inferSelect): Grant {
  return {
    id: row.id,
    clientId: row.clientId,
    sub: row.sub,
    scopes: row.scopes,
    resources: row.resources,
    sid: row.sid,
    authTime: row.authTime,
    amr: row.amr,
    acr: row.acr,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
  };
}

function codeFromRow(row: typeof authorizationCodes.$inferSelect): AuthorizationCode {
  return {
    codeHash: row.codeHash,
    grantId: row.grantId,
    clientId: row.clientId,
    sub: row.sub,
    redirectUri: row.redirectUri,
    codeChallenge: row.codeChallenge,
    nonce: row.nonce,
    scopes: row.scopes,
    resources: row.resources,
    sid: row.sid,
    authTime: row.authTime,
    expiresAt: row.expiresAt,
    usedAt: row.usedAt,
    dpopJkt: row.dpopJkt,
  };
}

function refreshTokenFromRow(row: typeof refreshTokens.$inferSelect): RefreshToken {
  return {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    clientId: row.clientId,
    sub: row.sub,
    scopes: row.scopes,
    resources: row.resources,
    parentHash: row.parentHash,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    usedAt: row.usedAt,
    revokedAt: row.revokedAt,
    dpopJkt: row.dpopJkt,
  };
}

function accessTokenFromRow(row: typeof accessTokens.$inferSelect): OpaqueAccessToken {
  return {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    clientId: row.clientId,
    sub: row.sub,
    scopes: row.scopes,
    audience: row.audience,
    issuedAt: row.issuedAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    dpopJkt: row.dpopJkt,
    claims: row.claims,
  };
}

// ─── Signing keys ────────────────────────────────────────────────────────────────────────────────

export function createKeyStore(db: AppDatabase): KeyStore {
  return {
    async listSigningKeys() {
      const rows = await db.select().from(signingKeys).orderBy(signingKeys.createdAt, signingKeys.kid);
      return rows.map(signingKeyFromRow);
    },
    async insertSigningKey(key) {
      await db.insert(signingKeys).values(key);
    },
    async retireSigningKey(kid, retiresAt, removeAfter) {
      await db.update(signingKeys).set({ retiresAt, removeAfter }).where(eq(signingKeys.kid, kid));
    },
    async deleteSigningKey(kid) {
      await db.delete(signingKeys).where(eq(signingKeys.kid, kid));
    },
  };
}

export function signingKeyFromRow(row: typeof signingKeys.$inferSelect): SigningKeyRecord {
  return {
    kid: row.kid,
    alg: row.alg as SigningAlg,
    publicJwk: row.publicJwk,
    privateKeyCiphertext: row.privateKeyCiphertext,
    createdAt: row.createdAt,
    activatesAt: row.activatesAt,
    retiresAt: row.retiresAt,
    removeAfter: row.removeAfter,
  };
}
