import { endSessionGrants, type LogoutContext, type SessionLogout } from '@oidc-orders/oauth-core';
import { and, eq, isNull } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { disabledSubsWithSessions } from '../accounts/drizzle/account-joins.js';
import type { AppDatabase } from '../db/client.js';
import { grants } from '../db/schema.js';
import { createSsoSessionRepository } from '../interaction/sso-session-repository.js';
import type { BackchannelLogoutSender } from './backchannel-sender.js';

/**
 * What the notifications of an ended SSO session need: oauth-core's logout context and the sender
 * that POSTs the logout tokens (a server's, or the `users` command's own).
 */
export interface SessionEndDeps {
  context: LogoutContext;
  backchannel: Pick<BackchannelLogoutSender, 'send'>;
}

/**
 * One ended SSO session, told to its relying parties: the grants obtained in it are revoked and
 * every participating client with a `backchannel_logout_uri` is sent a logout token carrying the
 * session's `sid` and the user's `sub` (OIDC Back-Channel Logout 1.0 §2.4), in the background,
 * with retries (src/logout/backchannel-sender.ts).
 */
export async function notifySessionEnded(
  session: { id: string; sub: string },
  deps: SessionEndDeps,
): Promise<SessionLogout> {
  const ended = await endSessionGrants({ sid: session.id, sub: session.sub }, deps.context);
  deps.backchannel.send(ended.backChannel);
  return ended;
}

export interface UserSignOutResult {
  /** SSO sessions ended (each one told to its relying parties). */
  sessions: number;
  /** Grants revoked: their refresh tokens and opaque access tokens stop at once. */
  grants: number;
}

/**
 * Signing a user out everywhere, from whichever process does it (a server instance, the `users`
 * command): after a password change (the account page keeps its own session), a reset by the
 * administrator, or when the user is disabled. Everything goes through the shared database, so
 * every instance refuses the ended sessions and tokens on its next request.
 */
export function createUserSignOut(deps: SessionEndDeps & { db: AppDatabase }) {
  const { db, context } = deps;
  const sessions = createSsoSessionRepository(db);

  async function revokeRemainingGrants(sub: string): Promise<number> {
    const live = await db
      .select({ id: grants.id })
      .from(grants)
      .where(and(eq(grants.sub, sub), isNull(grants.revokedAt)));
    const now = context.clock.nowSeconds();
    for (const grant of live) await context.stores.grants.revokeGrant(grant.id, now);
    return live.length;
  }

  /**
   * Ends every SSO session of `sub` except `keepSessionId`, as a logout does: the grants obtained in
   * each are revoked and its relying parties get back-channel logout. Returns the sessions ended and
   * the grants revoked.
   */
  async function endSessions(sub: string, keepSessionId?: string): Promise<UserSignOutResult> {
    let revoked = 0;
    const ended = await sessions.deleteAllOf(sub, keepSessionId);
    for (const session of ended) revoked += (await notifySessionEnded(session, deps)).revokedGrantIds.length;
    return { sessions: ended.length, grants: revoked };
  }

  /**
   * `endSessions`, then every grant of the user still live is revoked too, those of the kept
   * session and of clients that keep offline access across logouts included: whoever held the old
   * password or a stolen token is out.
   */
  async function endUserSessions(sub: string, keepSessionId?: string): Promise<UserSignOutResult> {
    const ended = await endSessions(sub, keepSessionId);
    return { sessions: ended.sessions, grants: ended.grants + (await revokeRemainingGrants(sub)) };
  }

  /**
   * Signs out the disabled users who still have sessions (the seed file no longer names them, or
   * a process stopped before it had told the relying parties). Their sessions end as at logout;
   * their other grants are left to the disabled user's lookups, so that naming the user again in
   * the seed gives them back (README "seed is the truth"). Returns the users signed out.
   */
  async function endSessionsOfDisabledUsers(): Promise<string[]> {
    const subs = await disabledSubsWithSessions(db);
    for (const sub of subs) await endSessions(sub);
    return subs.sort();
  }

  return { endUserSessions, endSessionsOfDisabledUsers };
}

export type UserSignOut = ReturnType<typeof createUserSignOut>;

/** Signs out the disabled users who still have sessions, and logs them by `sub` (never a secret). */
export async function endSessionsOfDisabledUsers(
  log: Pick<FastifyBaseLogger, 'warn'>,
  userSignOut: UserSignOut,
): Promise<void> {
  const signedOut = await userSignOut.endSessionsOfDisabledUsers();
  if (signedOut.length > 0) log.warn({ users: signedOut }, 'disabled users signed out of their sessions');
}
