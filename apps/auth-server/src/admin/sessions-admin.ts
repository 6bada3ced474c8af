import type { LogoutContext } from '@oidc-orders/oauth-core';
import { and, asc, desc, eq, gt, inArray, isNull } from 'drizzle-orm';
import { AUDIT_EVENTS } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { grants, ssoSessions } from '../db/schema.js';
import { createSsoSessionRepository } from '../interaction/sso-session-repository.js';
import type { BackchannelLogoutSender } from '../logout/backchannel-sender.js';
import { notifySessionEnded } from '../logout/user-sign-out.js';
import { type AdminActor, type AdminAuditRecorder, actorFields } from './admin-audit.js';
import { AdminNotFoundError } from './admin-errors.js';

/**
 * SSO sessions and grants as an operator sees them (the admin API and console): list a user's,
 * end one session (its relying parties told over the back channel, as at logout) or revoke one
 * grant (its refresh and opaque access tokens stop at once). Every change is an audit event
 * naming the actor.
 */
export interface SessionsAdminDeps {
  db: AppDatabase;
  /** oauth-core's logout context: revoking a session's grants and signing its logout tokens. */
  context: LogoutContext;
  backchannel: Pick<BackchannelLogoutSender, 'send'>;
  audit: AdminAuditRecorder;
}

export interface SessionOverview {
  sid: string;
  sub: string;
  createdAt: number;
  authTime: number;
  expiresAt: number;
  lastUsedAt: number | null;
  ip: string | null;
  userAgent: string | null;
  /** The sign-in methods completed in it (`pwd`, `otp`, `hwk`…). */
  methods: string[];
  /** The clients that hold a live grant obtained in this session. */
  clients: string[];
}

export interface GrantOverview {
  grantId: string;
  clientId: string;
  sub: string;
  scopes: string[];
  resources: string[];
  /** The SSO session it was obtained in, `null` for a device or exchanged grant. */
  sid: string | null;
  createdAt: number;
}

const grantOverview = (row: typeof grants.$inferSelect): GrantOverview => ({
  grantId: row.id,
  clientId: row.clientId,
  sub: row.sub,
  scopes: [...row.scopes],
  resources: [...row.resources],
  sid: row.sid,
  createdAt: row.createdAt,
});

export function createSessionsAdmin(deps: SessionsAdminDeps) {
  const { db, context } = deps;
  const sessions = createSsoSessionRepository(db);

  async function liveGrantsOfSessions(sids: string[]) {
    if (sids.length === 0) return [];
    return db
      .select({ sid: grants.sid, clientId: grants.clientId })
      .from(grants)
      .where(and(inArray(grants.sid, sids), isNull(grants.revokedAt)));
  }

  return {
    /** The user's live sessions, oldest first, each with the clients signed in through it. */
    async sessionsOf(sub: string): Promise<SessionOverview[]> {
      const rows = await sessions.listActive(sub, context.clock.nowSeconds());
      const held = await liveGrantsOfSessions(rows.map((row) => row.id));
      return rows.map((row) => ({
        sid: row.id,
        sub: row.sub,
        createdAt: row.createdAt,
        authTime: row.authTime,
        expiresAt: row.expiresAt,
        lastUsedAt: row.lastUsedAt,
        ip: row.ip,
        userAgent: row.userAgent,
        methods: row.methods.map((completed) => completed.method),
        clients: [
          ...new Set(held.filter((grant) => grant.sid === row.id).map((grant) => grant.clientId)),
        ].sort(),
      }));
    },

    /** The user's live grants, newest first. */
    async grantsOf(sub: string): Promise<GrantOverview[]> {
      const rows = await db
        .select()
        .from(grants)
        .where(and(eq(grants.sub, sub), isNull(grants.revokedAt)))
        .orderBy(desc(grants.createdAt), asc(grants.id));
      return rows.map(grantOverview);
    },

    /**
     * Ends one SSO session as a logout does (OIDC Back-Channel Logout 1.0 §2.4): its grants are
     * revoked and every participating relying party with a back-channel URI gets a logout token.
     */
    async endSession(sid: string, by: AdminActor) {
      const now = context.clock.nowSeconds();
      const [live] = await db
        .select({ id: ssoSessions.id })
        .from(ssoSessions)
        .where(and(eq(ssoSessions.id, sid), gt(ssoSessions.expiresAt, now)));
      const ended = live ? await sessions.delete(sid) : null;
      if (ended === null) throw new AdminNotFoundError('session', sid);
      const logout = await notifySessionEnded(ended, deps);
      await deps.audit(AUDIT_EVENTS.adminSessionRevoked, { sub: ended.sub, sid, ...actorFields(by) });
      return { sid, sub: ended.sub, grants: logout.revokedGrantIds.length };
    },

    /** Revokes one grant: every refresh token and opaque access token of it stops (RFC 7009 §2.1). */
    async revokeGrant(grantId: string, by: AdminActor) {
      const [row] = await db
        .select()
        .from(grants)
        .where(and(eq(grants.id, grantId), isNull(grants.revokedAt)));
      if (row === undefined) throw new AdminNotFoundError('grant', grantId);
      await context.stores.grants.revokeGrant(grantId, context.clock.nowSeconds());
      await deps.audit(AUDIT_EVENTS.adminGrantRevoked, {
        sub: row.sub,
        client_id: row.clientId,
        grant_id: grantId,
        ...actorFields(by),
      });
      return grantOverview(row);
    },
  };
}

export type SessionsAdmin = ReturnType<typeof createSessionsAdmin>;
