import { and, eq, gt, lte } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { ssoSessions } from '../db/schema.js';

/** A live single-sign-on session. `id` is the OIDC `sid` carried into ID tokens and grants. */
export interface SsoSession {
  id: string;
  sub: string;
  /** OIDC `auth_time`, whole seconds. */
  authTime: number;
  /** RFC 8176 `amr` of the sign-in; absent for sessions from before it was recorded. */
  amr?: string[];
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
  renew(id: string, keyHash: string, authTime: number, expiresAt: number, amr?: string[]): Promise<void>;
  /** Deletes the session and returns what was deleted (for logout notifications), or `null`. */
  delete(id: string): Promise<SsoSession | null>;
  /** Housekeeping: drops sessions that expired at or before `now`. */
  deleteExpired(now: number): Promise<void>;
}

const columns = {
  id: ssoSessions.id,
  sub: ssoSessions.sub,
  authTime: ssoSessions.authTime,
  amr: ssoSessions.amr,
  createdAt: ssoSessions.createdAt,
  expiresAt: ssoSessions.expiresAt,
};

type SessionRow = Omit<SsoSession, 'amr'> & { amr: string[] | null };

const sessionOf = (row: SessionRow | undefined): SsoSession | null => {
  if (row === undefined) return null;
  const { amr, ...session } = row;
  return amr === null ? session : { ...session, amr };
};

export function createSsoSessionRepository(db: AppDatabase): SsoSessionRepository {
  return {
    async create(session, keyHash) {
      await db.insert(ssoSessions).values({ ...session, keyHash });
    },
    async findActive(keyHash, now) {
      const rows = await db
        .select(columns)
        .from(ssoSessions)
        .where(and(eq(ssoSessions.keyHash, keyHash), gt(ssoSessions.expiresAt, now)))
        .limit(1);
      return sessionOf(rows[0]);
    },
    async renew(id, keyHash, authTime, expiresAt, amr) {
      await db
        .update(ssoSessions)
        .set({ keyHash, authTime, expiresAt, amr: amr ?? null })
        .where(eq(ssoSessions.id, id));
    },
    async delete(id) {
      const rows = await db.delete(ssoSessions).where(eq(ssoSessions.id, id)).returning(columns);
      return sessionOf(rows[0]);
    },
    async deleteExpired(now) {
      await db.delete(ssoSessions).where(lte(ssoSessions.expiresAt, now));
    },
  };
}
