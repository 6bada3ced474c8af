import type { CookieSerializeOptions } from '@fastify/cookie';
import {
  authTimeOf,
  type Clock,
  type CompletedMethod,
  type RandomSource,
  withCompletedMethod,
} from '@oidc-orders/oauth-core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { USER_AGENT_MAX_LENGTH } from '../account/user-agent.js';
import { hashCookieValue } from '../interaction/cookie-hash.js';
import type {
  SignInOrigin,
  SsoSession,
  SsoSessionRepository,
} from '../interaction/sso-session-repository.js';

/**
 * The single-sign-on session and the browser-binding cookie (README "Sessions and cookies").
 *
 * - Session cookie: an opaque random key (256 bits). The `sso_sessions` row stores only its
 *   SHA-256, so a leaked database row cannot be replayed as a cookie. A fresh key is issued at
 *   every login (no session fixation); re-authenticating the same user keeps the `sid`.
 *   The row also records the User-Agent (truncated) and client address of the latest sign-in, and
 *   when the session was last used, so the account page can list "Chrome on Linux, 203.0.113.7".
 * - Browser cookie: an opaque random key naming this browser; interactions store its hash and the
 *   CSRF tokens are keyed by it, so an interaction cannot be completed from another browser.
 *
 * Both are HttpOnly, SameSite=Lax (sent on the top-level GET navigation from a relying party to
 * /authorize, not on cross-site subresource or POST requests), Path=/, and Secure with the
 * `__Host-` prefix when the issuer is https.
 */

export interface SsoSessionPluginOptions {
  repository: SsoSessionRepository;
  issuer: string;
  clock: Clock;
  random: RandomSource;
  /** Absolute session lifetime, seconds. */
  sessionTtl: number;
}

/** Called after a session ended (logout, or replaced by a new login); the extension point for front- and back-channel logout. */
export type SessionEndedListener = (session: SsoSession, request: FastifyRequest) => Promise<void> | void;

export interface SsoSessionManager {
  readonly cookieNames: { session: string; browser: string };
  /** The live session named by the request's cookie, or `null`. */
  current(request: FastifyRequest): Promise<SsoSession | null>;
  /**
   * The hash under which the request's session cookie is stored, `null` without one: for a read
   * that fetches the session together with another row (the interaction pages' guard).
   */
  sessionKeyHash(request: FastifyRequest): string | null;
  /**
   * `current`, for a session row already read under `sessionKeyHash(request)` at `now` (`null`:
   * none live): records its use as `current` does.
   */
  currentFrom(found: SsoSession | null, now: number): Promise<SsoSession | null>;
  /**
   * Records a successful login of `sub` now and sets a new cookie key (no session fixation). The
   * same user keeps the session id; another user's session on this browser is ended first. With
   * `loginOf`, the session is recorded as the login of that interaction in the same statement.
   */
  start(
    request: FastifyRequest,
    reply: FastifyReply,
    sub: string,
    method?: Omit<CompletedMethod, 'at'>,
    loginOf?: string,
  ): Promise<SsoSession>;
  /**
   * Records a further method (second factor, step-up) in `session` now: amr, acr and `auth_time`
   * follow from it, and the cookie key is replaced.
   */
  addMethod(
    reply: FastifyReply,
    session: SsoSession,
    method: Omit<CompletedMethod, 'at'>,
  ): Promise<SsoSession>;
  /** Ends the request's session (row and cookie) and notifies listeners. Returns what ended. */
  end(request: FastifyRequest, reply: FastifyReply): Promise<SsoSession | null>;
  onSessionEnded(listener: SessionEndedListener): void;
  /** The user's live sessions. */
  listActive(sub: string): Promise<SsoSession[]>;
  /** Ends every session of `keep.sub` but `keep` (with logout notifications); returns how many. */
  endOthers(request: FastifyRequest, keep: SsoSession): Promise<number>;
  /**
   * Ends one other session of `keep.sub` (with logout notifications). `id` is looked up among that
   * user's own sessions only, so an id of someone else's session ends nothing. False when not found.
   */
  endOne(request: FastifyRequest, keep: SsoSession, id: string): Promise<boolean>;
  /** The browser-binding key, creating and setting the cookie when the browser has none yet. */
  ensureBrowserKey(request: FastifyRequest, reply: FastifyReply): string;
  /** The browser-binding key sent by the browser, or `null`. */
  browserKey(request: FastifyRequest): string | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    ssoSessions: SsoSessionManager;
  }
}

/**
 * "Last used" on the account page is kept to the minute: a request that presents the session writes
 * only when the recorded time is at least this old, so a busy session costs one UPDATE a minute.
 */
export const LAST_USED_GRANULARITY_SECONDS = 60;

/** The browser and address a sign-in came from, as the account page shows them. */
const signInOrigin = (request: FastifyRequest): SignInOrigin => ({
  userAgent: request.headers['user-agent']?.slice(0, USER_AGENT_MAX_LENGTH) || null,
  ip: request.ip || null,
});

function sessionManager(options: SsoSessionPluginOptions, log: (error: unknown) => void): SsoSessionManager {
  const { repository, clock, random } = options;
  const secure = new URL(options.issuer).protocol === 'https:';
  // RFC 6265bis §4.1.3.2: `__Host-` cookies must be Secure, Path=/ and have no Domain, which
  // pins them to this exact host.
  const prefix = secure ? '__Host-' : '';
  const cookieNames = { session: `${prefix}op_session`, browser: `${prefix}op_browser` };
  const baseCookie: CookieSerializeOptions = { httpOnly: true, sameSite: 'lax', path: '/', secure };
  const listeners: SessionEndedListener[] = [];
  // A browser key minted earlier in the same request (the cookie is not readable until the next one).
  const mintedBrowserKeys = new WeakMap<FastifyRequest, string>();

  const newKey = () => Buffer.from(random.bytes(32)).toString('base64url');
  const sessionKeyOf = (request: FastifyRequest) => request.cookies[cookieNames.session] || null;

  const sessionKeyHash = (request: FastifyRequest) => {
    const key = sessionKeyOf(request);
    return key === null ? null : hashCookieValue(key);
  };

  async function currentFrom(session: SsoSession | null, now: number) {
    if (session === null || now - (session.lastUsedAt ?? 0) < LAST_USED_GRANULARITY_SECONDS) return session;
    await repository.touch(session.id, now);
    return { ...session, lastUsedAt: now };
  }

  async function current(request: FastifyRequest) {
    const keyHash = sessionKeyHash(request);
    if (keyHash === null) return null;
    const now = clock.nowSeconds();
    return currentFrom(await repository.findActive(keyHash, now), now);
  }

  async function notifyEnded(session: SsoSession, request: FastifyRequest) {
    for (const listener of listeners) {
      // Logout must not fail because a notification did; each listener reports its own errors.
      try {
        await listener(session, request);
      } catch (error) {
        log(error);
      }
    }
  }

  async function endCurrent(request: FastifyRequest) {
    const existing = await current(request);
    if (existing === null) return null;
    const ended = await repository.delete(existing.id);
    if (ended !== null) await notifyEnded(ended, request);
    return ended;
  }

  return {
    cookieNames,
    current,
    sessionKeyHash,
    currentFrom,
    async start(request, reply, sub, method = { method: 'password' }, loginOf) {
      const now = clock.nowSeconds();
      // The first method of a sign-in (a password, or a passwordless one) starts the list over.
      const methods: CompletedMethod[] = [{ ...method, at: now }];
      const key = newKey();
      const expiresAt = now + options.sessionTtl;
      const origin = signInOrigin(request);
      const existing = await current(request);
      let session: SsoSession;
      if (existing !== null && existing.sub === sub) {
        // Same user signing in again (prompt=login, max_age): same sid, fresh auth_time, new key.
        await repository.renew(existing.id, hashCookieValue(key), now, expiresAt, methods, origin, loginOf);
        session = { ...existing, authTime: now, expiresAt, methods, ...origin, lastUsedAt: now };
      } else {
        // Someone else signs in on this browser: the previous user's session ends first.
        await endCurrent(request);
        session = {
          id: Buffer.from(random.bytes(16)).toString('base64url'),
          sub,
          authTime: now,
          methods,
          createdAt: now,
          expiresAt,
          ...origin,
          lastUsedAt: now,
        };
        await repository.create(session, hashCookieValue(key), loginOf);
      }
      reply.setCookie(cookieNames.session, key, { ...baseCookie, expires: new Date(expiresAt * 1000) });
      return session;
    },
    async addMethod(reply, session, method) {
      const methods = withCompletedMethod(session.methods, { ...method, at: clock.nowSeconds() });
      const authTime = authTimeOf(methods) ?? session.authTime;
      const key = newKey();
      await repository.recordMethods(session.id, hashCookieValue(key), methods, authTime);
      reply.setCookie(cookieNames.session, key, {
        ...baseCookie,
        expires: new Date(session.expiresAt * 1000),
      });
      return { ...session, methods, authTime };
    },
    async end(request, reply) {
      const ended = await endCurrent(request);
      if (sessionKeyOf(request) !== null) reply.clearCookie(cookieNames.session, baseCookie);
      return ended;
    },
    onSessionEnded(listener) {
      listeners.push(listener);
    },
    listActive(sub) {
      return repository.listActive(sub, clock.nowSeconds());
    },
    async endOthers(request, keep) {
      let ended = 0;
      for (const other of await repository.listActive(keep.sub, clock.nowSeconds())) {
        if (other.id === keep.id) continue;
        const deleted = await repository.delete(other.id);
        if (deleted === null) continue;
        ended += 1;
        await notifyEnded(deleted, request);
      }
      return ended;
    },
    async endOne(request, keep, id) {
      const sessions = await repository.listActive(keep.sub, clock.nowSeconds());
      const target = sessions.find((other) => other.id === id && other.id !== keep.id);
      const deleted = target === undefined ? null : await repository.delete(target.id);
      if (deleted === null) return false;
      await notifyEnded(deleted, request);
      return true;
    },
    ensureBrowserKey(request, reply) {
      const existing = request.cookies[cookieNames.browser] || mintedBrowserKeys.get(request);
      if (existing) return existing;
      const key = newKey();
      mintedBrowserKeys.set(request, key);
      // A browser-session cookie: interactions live minutes, so it need not outlive the browser.
      reply.setCookie(cookieNames.browser, key, baseCookie);
      return key;
    },
    browserKey(request) {
      return request.cookies[cookieNames.browser] || mintedBrowserKeys.get(request) || null;
    },
  };
}

export const ssoSessionPlugin = fp<SsoSessionPluginOptions>(
  async (app, options) => {
    app.decorate(
      'ssoSessions',
      sessionManager(options, (error) => app.log.error({ err: error }, 'session-ended listener failed')),
    );
  },
  { name: 'sso-session', fastify: '5.x', dependencies: ['@fastify/cookie'] },
);
