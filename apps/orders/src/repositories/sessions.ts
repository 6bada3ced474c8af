import { and, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { sessions } from '../db/schema.js';

export type SessionRow = typeof sessions.$inferSelect;
export type NewSessionRow = Omit<typeof sessions.$inferInsert, 'refreshLease' | 'refreshLeaseExpiresAt'>;

export async function insertSession(db: AppDatabase, row: NewSessionRow): Promise<void> {
  await db.insert(sessions).values(row);
}

/** The session with this id, if it has not expired. */
export async function findActiveSession(
  db: AppDatabase,
  id: string,
  now: Date,
): Promise<SessionRow | undefined> {
  const [row] = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, id), gt(sessions.expiresAt, now)));
  return row;
}

export async function deleteSession(db: AppDatabase, id: string): Promise<boolean> {
  const deleted = await db.delete(sessions).where(eq(sessions.id, id)).returning({ id: sessions.id });
  return deleted.length > 0;
}

/**
 * OIDC Back-Channel Logout §2.7: a token with `sid` ends the sessions of that provider session
 * (and of that `sub` too, when the token names both); a token with only `sub` ends all of them.
 */
export async function deleteSessionsForLogout(
  db: AppDatabase,
  { sid, sub }: { sid?: string | undefined; sub?: string | undefined },
): Promise<number> {
  const conditions = [];
  if (sid !== undefined) conditions.push(eq(sessions.sid, sid));
  if (sub !== undefined) conditions.push(eq(sessions.sub, sub));
  if (conditions.length === 0) return 0;
  const deleted = await db
    .delete(sessions)
    .where(and(...conditions))
    .returning({ id: sessions.id });
  return deleted.length;
}

export async function deleteExpiredSessions(db: AppDatabase, now: Date): Promise<number> {
  const deleted = await db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id });
  return deleted.length;
}

/**
 * Takes the refresh lease of a session, unless another caller holds an unexpired one. One
 * conditional UPDATE, so of several instances (or requests) racing, exactly one gets the row back.
 */
export async function acquireRefreshLease(
  db: AppDatabase,
  id: string,
  lease: { owner: string; expiresAt: Date },
  now: Date,
): Promise<SessionRow | undefined> {
  const [row] = await db
    .update(sessions)
    .set({ refreshLease: lease.owner, refreshLeaseExpiresAt: lease.expiresAt })
    .where(
      and(
        eq(sessions.id, id),
        gt(sessions.expiresAt, now),
        or(isNull(sessions.refreshLease), lt(sessions.refreshLeaseExpiresAt, now)),
      ),
    )
    .returning();
  return row;
}

/** Stores refreshed tokens and frees the lease, only if `owner` still holds it. */
export async function saveRefreshedTokens(
  db: AppDatabase,
  id: string,
  owner: string,
  update: { tokens: string; accessTokenExpiresAt: Date | null; accessTokenRefreshAt: Date | null },
): Promise<boolean> {
  const updated = await db
    .update(sessions)
    .set({ ...update, refreshLease: null, refreshLeaseExpiresAt: null })
    .where(and(eq(sessions.id, id), eq(sessions.refreshLease, owner)))
    .returning({ id: sessions.id });
  return updated.length > 0;
}

export async function releaseRefreshLease(db: AppDatabase, id: string, owner: string): Promise<void> {
  await db
    .update(sessions)
    .set({ refreshLease: null, refreshLeaseExpiresAt: null })
    .where(and(eq(sessions.id, id), eq(sessions.refreshLease, owner)));
}
