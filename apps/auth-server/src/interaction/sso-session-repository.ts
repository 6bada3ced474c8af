import type { CompletedMethod } from '@oidc-orders/oauth-core';
import { and, eq, gt, lte, ne, sql } from 'drizzle-orm';
import type { WithSubqueryWithSelection } from 'drizzle-orm/pg-core';
import type { AppDatabase } from '../db/client.js';
import { interactions, ssoSessions } from '../db/schema.js';
import { lazy } from '../storage/drizzle/prepared-statements.js';

/** A live single-sign-on session. `id` is the OIDC `sid` carried into ID tokens and grants. */
export interface SsoSession {
  id: string;
  sub: string;
  /** OIDC `auth_time`, whole seconds: when the latest method of `methods` succeeded. */
  authTime: number;
  /** The sign-in methods completed (oauth-core `CompletedMethod`; amr and acr derive from them). */
  methods: CompletedMethod[];
  createdAt: number;
  expiresAt: number;
  /** The User-Agent header of the latest sign-in (truncated), for the account page; null when absent. */
  userAgent: string | null;
  /** The client address of the latest sign-in (`request.ip`, so TRUST_PROXY applies). */
  ip: string | null;
  /** When a request last presented the session, to the minute (see `touch`); null for older rows. */
  lastUsedAt: number | null;
}

/** Where a sign-in came from: recorded when a session starts or is renewed. */
export type SignInOrigin = Pick<SsoSession, 'userAgent' | 'ip'>;

export interface SsoSessionRepository {
  /**
   * Stores a new session; `keyHash` is the hash of the opaque cookie value. With `loginOf`, the
   * same statement records the session as the login of that interaction (`Interaction.loginSid`).
   */
  create(session: SsoSession, keyHash: string, loginOf?: string): Promise<void>;
  /** The session whose cookie key hashes to `keyHash`, or `null` when unknown or expired at `now`. */
  findActive(keyHash: string, now: number): Promise<SsoSession | null>;
  /**
   * Re-authentication of the same user inside a live session: keeps the `sid` (relying parties
   * keep their sessions), moves `auth_time` and expiry, and replaces the cookie key. `loginOf` as
   * for `create`.
   */
  renew(
    id: string,
    keyHash: string,
    authTime: number,
    expiresAt: number,
    methods: CompletedMethod[],
    origin: SignInOrigin,
    loginOf?: string,
  ): Promise<void>;
  /** Records that the session was used at `now` (the account page's "last used"). */
  touch(id: string, now: number): Promise<void>;
  /**
   * A further method completed (second factor, step-up): records the methods and `auth_time` and
   * replaces the cookie key (the session is worth more now; no fixation).
   */
  recordMethods(id: string, keyHash: string, methods: CompletedMethod[], authTime: number): Promise<void>;
  /** Deletes the session and returns what was deleted (for logout notifications), or `null`. */
  delete(id: string): Promise<SsoSession | null>;
  /**
   * Deletes every session of `sub` (expired ones too) but `keepId`, and returns what was deleted.
   * One statement: of two processes ending the same user's sessions, each row goes to one of them,
   * so each relying party is told once.
   */
  deleteAllOf(sub: string, keepId?: string): Promise<SsoSession[]>;
  /** The user's live sessions (the account page lists them), oldest first. */
  listActive(sub: string, now: number): Promise<SsoSession[]>;
  /** Housekeeping: drops sessions that expired at or before `now`. */
  deleteExpired(now: number): Promise<void>;
}

/** The columns of a session as `SsoSession` names them (no key hash). */
export const ssoSessionColumns = {
  id: ssoSessions.id,
  sub: ssoSessions.sub,
  authTime: ssoSessions.authTime,
  methods: ssoSessions.methods,
  createdAt: ssoSessions.createdAt,
  expiresAt: ssoSessions.expiresAt,
  userAgent: ssoSessions.userAgent,
  ip: ssoSessions.ip,
  lastUsedAt: ssoSessions.lastUsedAt,
};

/** The jsonb column is typed loosely; method names are the oauth-core table's keys. */
export const ssoSessionFromRow = (row: Omit<SsoSession, 'methods'> & { methods: unknown }): SsoSession => ({
  ...row,
  methods: row.methods as CompletedMethod[],
});

/**
 * `update interactions set login_sid = (the session's id)` for the interaction of the
 * `interactionId` placeholder, with the session written by the CTE `session` (`new_session`).
 */
function recordLoginFrom(
  db: AppDatabase,
  session: WithSubqueryWithSelection<{ id: typeof ssoSessions.id }, 'new_session'>,
) {
  return db
    .with(session)
    .update(interactions)
    .set({ loginSid: sql`(select ${sql.identifier('id')} from ${session})` })
    .where(eq(interactions.id, sql.placeholder('interactionId')));
}

export function createSsoSessionRepository(db: AppDatabase): SsoSessionRepository {
  // Every page and /authorize of a browser with a session cookie reads it: prepared.
  const findActive = lazy(() =>
    db
      .select(ssoSessionColumns)
      .from(ssoSessions)
      .where(
        and(
          eq(ssoSessions.keyHash, sql.placeholder('keyHash')),
          gt(ssoSessions.expiresAt, sql.placeholder('now')),
        ),
      )
      .limit(1)
      .prepare('auth_find_active_sso_session'),
  );
  // A sign-in's session row, prepared like the read; with the interaction's login in the same
  // statement (`with new_session as (insert … returning id) update interactions …`): one commit.
  const p = (name: string) => sql.placeholder(name);
  const sessionValues = {
    id: p('id'),
    keyHash: p('keyHash'),
    sub: p('sub'),
    authTime: p('authTime'),
    methods: p('methods'),
    createdAt: p('createdAt'),
    expiresAt: p('expiresAt'),
    userAgent: p('userAgent'),
    ip: p('ip'),
    lastUsedAt: p('lastUsedAt'),
  };
  const create = lazy(() => db.insert(ssoSessions).values(sessionValues).prepare('auth_create_sso_session'));
  const createForLogin = lazy(() => {
    const newSession = db
      .$with('new_session')
      .as(db.insert(ssoSessions).values(sessionValues).returning({ id: ssoSessions.id }));
    return recordLoginFrom(db, newSession).prepare('auth_create_sso_session_for_login');
  });
  return {
    async create(session, keyHash, loginOf) {
      if (loginOf === undefined) await create().execute({ ...session, keyHash });
      else await createForLogin().execute({ ...session, keyHash, interactionId: loginOf });
    },
    async recordMethods(id, keyHash, methods, authTime) {
      await db.update(ssoSessions).set({ keyHash, methods, authTime }).where(eq(ssoSessions.id, id));
    },
    async findActive(keyHash, now) {
      const rows = await findActive().execute({ keyHash, now });
      return rows[0] ? ssoSessionFromRow(rows[0]) : null;
    },
    async renew(id, keyHash, authTime, expiresAt, methods, origin, loginOf) {
      const renew = db
        .update(ssoSessions)
        .set({ keyHash, authTime, expiresAt, methods, ...origin, lastUsedAt: authTime })
        .where(eq(ssoSessions.id, id));
      if (loginOf === undefined) await renew;
      else {
        const renewed = db.$with('new_session').as(renew.returning({ id: ssoSessions.id }));
        await recordLoginFrom(db, renewed).execute({ interactionId: loginOf });
      }
    },
    async touch(id, now) {
      await db.update(ssoSessions).set({ lastUsedAt: now }).where(eq(ssoSessions.id, id));
    },
    async delete(id) {
      const rows = await db.delete(ssoSessions).where(eq(ssoSessions.id, id)).returning(ssoSessionColumns);
      return rows[0] ? ssoSessionFromRow(rows[0]) : null;
    },
    async deleteAllOf(sub, keepId) {
      const rows = await db
        .delete(ssoSessions)
        .where(and(eq(ssoSessions.sub, sub), keepId === undefined ? undefined : ne(ssoSessions.id, keepId)))
        .returning(ssoSessionColumns);
      return rows.map(ssoSessionFromRow);
    },
    async listActive(sub, now) {
      const rows = await db
        .select(ssoSessionColumns)
        .from(ssoSessions)
        .where(and(eq(ssoSessions.sub, sub), gt(ssoSessions.expiresAt, now)))
        .orderBy(ssoSessions.createdAt);
      return rows.map(ssoSessionFromRow);
    },
    async deleteExpired(now) {
      await db.delete(ssoSessions).where(lte(ssoSessions.expiresAt, now));
    },
  };
}
