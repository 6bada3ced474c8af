import { and, eq, inArray, or } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { federatedSessions } from '../db/schema.js';

export interface FederatedSessionRecord {
  sessionId: string;
  providerId: string;
  upstreamSubject: string;
  upstreamSid: string | null;
  idToken: string;
  now: number;
}

/** Which upstream sign-in a session began with (a later federated sign-in on it replaces it). */
export async function recordFederatedSession(db: AppDatabase, record: FederatedSessionRecord): Promise<void> {
  const row = {
    providerId: record.providerId,
    upstreamSubject: record.upstreamSubject,
    upstreamSid: record.upstreamSid,
    idToken: record.idToken,
    createdAt: record.now,
  };
  await db
    .insert(federatedSessions)
    .values({ sessionId: record.sessionId, ...row })
    .onConflictDoUpdate({ target: federatedSessions.sessionId, set: row });
}

export async function federatedSessionOf(db: AppDatabase, sessionId: string) {
  const [row] = await db.select().from(federatedSessions).where(eq(federatedSessions.sessionId, sessionId));
  return row ?? null;
}

/**
 * OIDC Back-Channel Logout 1.0 §2.6: the sessions a provider's logout token names, by its `sid`
 * (that upstream session only) or else by its `sub` (every session of that upstream subject).
 */
export async function sessionsStartedBy(
  db: AppDatabase,
  providerId: string,
  upstream: { sid?: string; subject?: string },
): Promise<string[]> {
  const match = upstream.sid
    ? eq(federatedSessions.upstreamSid, upstream.sid)
    : upstream.subject
      ? eq(federatedSessions.upstreamSubject, upstream.subject)
      : undefined;
  if (match === undefined) return [];
  const rows = await db
    .select({ sessionId: federatedSessions.sessionId })
    .from(federatedSessions)
    .where(and(eq(federatedSessions.providerId, providerId), or(match)));
  return rows.map((row) => row.sessionId);
}

/** The record of sessions that ended. */
export async function forgetFederatedSessions(db: AppDatabase, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  await db.delete(federatedSessions).where(inArray(federatedSessions.sessionId, [...sessionIds]));
}
