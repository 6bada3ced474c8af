import type { CompletedMethod } from '@oidc-orders/oauth-core';
import { and, eq, gt, lte } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { ssoSessions } from '../db/schema.js';

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
}

export interface SsoSessionRepository {
  /** Stores a new session; `keyHash` is the hash of the opaque cookie value. */
  create(session: SsoSession, keyHash: string): Promise<void>;
  /** The session whose cookie key hashes to `keyHash`, or `null` when unknown or expired at `now`. */
  findActive(keyHash: string, now: number): Promise<SsoSession | null>;
  /**
   * Re-authentication of the same user inside a live session: keeps the `sid` (relying parties
   * keep their sessions), moves `auth_time` and expiry, and replaces the cookie key.
   */
  renew(
    id: string,
    keyHash: string,
    authTime: number,
    expiresAt: number,
    methods: CompletedMethod[],
  ): Promise<void>;
  /**
   * A further method completed (second factor, step-up): records the methods and `auth_time` and
   * replaces the cookie key (the session is worth more now; no fixation).
   */
  recordMethods(id: string, keyHash: string, methods: CompletedMethod[], authTime: number): Promise<void>;
  /** Deletes the session and returns what was deleted (for logout notifications), or `null`. */
  delete(id: string): Promise<SsoSession | null>;
  /** The user's live sessions (the account page lists them), oldest first. */
  listActive(sub: string, now: number): Promise<SsoSession[]>;
  /** Housekeeping: drops sessions that expired at or before `now`. */
  deleteExpired(now: number): Promise<void>;
}

const columns = {
  id: ssoSessions.id,
  sub: ssoSessions.sub,
  authTime: ssoSessions.authTime,
  methods: ssoSessions.methods,
  createdAt: ssoSessions.createdAt,
  expiresAt: ssoSessions.expiresAt,
};

/** The jsonb column is typed loosely; method names are the oauth-core table's keys. */
const withMethods = (row: Omit<SsoSession, 'methods'> & { methods: unknown }): SsoSession => ({
  ...row,
  methods: row.methods as CompletedMethod[],
});

export function createSsoSessionRepository(db: AppDatabase): SsoSessionRepository {
  return {
    async create(session, keyHash) {
      await db.insert(ssoSessions).values({ ...session, keyHash });
    },
    async recordMethods(id, keyHash, methods, authTime) {
      await db.update(ssoSessions).set({ keyHash, methods, authTime }).where(eq(ssoSessions.id, id));
    },
    async findActive(keyHash, now) {
      const rows = await db
        .select(columns)
        .from(ssoSessions)
        .where(and(eq(ssoSessions.keyHash, keyHash), gt(ssoSessions.expiresAt, now)))
        .limit(1);
      return rows[0] ? withMethods(rows[0]) : null;
    },
    async renew(id, keyHash, authTime, expiresAt, methods) {
      await db
        .update(ssoSessions)
        .set({ keyHash, authTime, expiresAt, methods })
        .where(eq(ssoSessions.id, id));
    },
    async delete(id) {
      const rows = await db.delete(ssoSessions).where(eq(ssoSessions.id, id)).returning(columns);
      return rows[0] ? withMethods(rows[0]) : null;
    },
    async listActive(sub, now) {
      const rows = await db
        .select(columns)
        .from(ssoSessions)
        .where(and(eq(ssoSessions.sub, sub), gt(ssoSessions.expiresAt, now)))
        .orderBy(ssoSessions.createdAt);
      return rows.map(withMethods);
    },
    async deleteExpired(now) {
      await db.delete(ssoSessions).where(lte(ssoSessions.expiresAt, now));
    },
  };
}
