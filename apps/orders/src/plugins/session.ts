import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { SignInUnavailableError } from '../errors.js';
import { deriveKey, sha256Base64url } from '../oidc/keys.js';
import { type AccessTokenSchedule, TokenRefresher } from '../oidc/token-refresher.js';
import { type SessionTokens, sealTokens, unsealTokens } from '../oidc/token-sealing.js';
import {
  deleteExpiredSessions,
  deleteSession,
  deleteSessionsForLogout,
  findActiveSession,
  insertSession,
} from '../repositories/sessions.js';

/**
 * `__Host-` (RFC 6265bis §4.1.3.2): the browser only accepts it Secure, with Path=/ and no Domain,
 * so no sibling subdomain can set or shadow it.
 */
export const SESSION_COOKIE = '__Host-orders-session';

export interface SignInSession {
  /** SHA-256 of the cookie key (the row id). */
  id: string;
  sub: string;
  sid: string | null;
  claims: Record<string, unknown>;
  tokens: SessionTokens;
  accessTokenExpiresAt: Date | null;
  accessTokenRefreshAt: Date | null;
  expiresAt: Date;
}

export interface NewSignInSession extends AccessTokenSchedule {
  sub: string;
  sid: string | null;
  claims: Record<string, unknown>;
  tokens: SessionTokens;
}

export interface SessionStore {
  /** The request's session (memoised per request), or undefined without a valid cookie. */
  load(request: FastifyRequest): Promise<SignInSession | undefined>;
  /** Stores a new session and sets its cookie; a session the browser already had is ended first. */
  create(request: FastifyRequest, reply: FastifyReply, session: NewSignInSession): Promise<SignInSession>;
  /** Deletes the request's session (if any) and clears the cookie; returns what was deleted. */
  end(request: FastifyRequest, reply: FastifyReply): Promise<SignInSession | undefined>;
  /** Back-channel logout: deletes the sessions of a provider session (`sid`) and/or user (`sub`). */
  endForLogout(target: { sid?: string | undefined; sub?: string | undefined }): Promise<number>;
  /** A valid access token for the session, refreshed when due (single-flight). */
  accessToken(session: SignInSession): Promise<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionStore;
  }
}

export interface SessionPluginOptions {
  /** Test seam: poll interval of a request waiting for another instance's refresh. */
  refreshPollIntervalMs?: number;
}

/**
 * Server-side sessions in the `sessions` table, shared by every instance (same database, same
 * SESSION_SECRET). The cookie holds only a random 256-bit key; the row (found by the key's hash)
 * holds the claims, the encrypted tokens, the provider's `sid` and the expiry.
 */
export const sessionPlugin = fp<SessionPluginOptions>(
  async (app, options) => {
    const { config } = app;
    await app.register(cookie);

    const secret = config.sessionSecret;
    const tokenKey = secret === undefined ? undefined : deriveKey(secret, 'session tokens');
    const refresher =
      tokenKey === undefined
        ? undefined
        : new TokenRefresher({
            db: app.db,
            provider: app.oidc,
            tokenKey,
            log: app.log,
            skewSeconds: config.oidc.refreshSkewSeconds,
            httpTimeoutMs: config.oidc.httpTimeoutMs,
            ...(options.refreshPollIntervalMs ? { pollIntervalMs: options.refreshPollIntervalMs } : {}),
          });
    const requireKey = (): Uint8Array => {
      // Sign-in is off (no OIDC_ISSUER outside development): no session can exist.
      if (tokenKey === undefined || config.oidc.issuer === undefined) {
        throw new SignInUnavailableError('not-configured');
      }
      return tokenKey;
    };

    const loaded = new WeakMap<FastifyRequest, Promise<SignInSession | undefined>>();
    const cookieOptions = {
      path: '/',
      secure: true,
      httpOnly: true,
      sameSite: 'lax' as const,
    };

    async function loadFromCookie(request: FastifyRequest): Promise<SignInSession | undefined> {
      const key = requireKey();
      const cookieValue = request.cookies[SESSION_COOKIE];
      if (!cookieValue) return undefined;
      const row = await findActiveSession(app.db, sha256Base64url(cookieValue), new Date());
      if (!row) return undefined;
      let tokens: SessionTokens;
      try {
        tokens = await unsealTokens(row.tokens, key);
      } catch {
        // Sealed under another SESSION_SECRET (a rotation): the session cannot be used any more.
        request.log.info('session tokens cannot be decrypted with the current SESSION_SECRET; ending it');
        await deleteSession(app.db, row.id);
        return undefined;
      }
      return {
        id: row.id,
        sub: row.sub,
        sid: row.sid,
        claims: row.claims,
        tokens,
        accessTokenExpiresAt: row.accessTokenExpiresAt,
        accessTokenRefreshAt: row.accessTokenRefreshAt,
        expiresAt: row.expiresAt,
      };
    }

    const store: SessionStore = {
      load(request) {
        let session = loaded.get(request);
        if (!session) {
          session = loadFromCookie(request);
          loaded.set(request, session);
        }
        return session;
      },

      async create(request, reply, input) {
        const key = requireKey();
        const previous = await store.load(request);
        if (previous) await deleteSession(app.db, previous.id);
        const now = new Date();
        // Housekeeping on the (rare) write path instead of a timer every instance would run.
        await deleteExpiredSessions(app.db, now);
        // RFC 6265bis §8.5 session fixation: always a fresh key, never one the browser brought.
        const cookieValue = randomBytes(32).toString('base64url');
        const session: SignInSession = {
          id: sha256Base64url(cookieValue),
          sub: input.sub,
          sid: input.sid,
          claims: input.claims,
          tokens: input.tokens,
          accessTokenExpiresAt: input.accessTokenExpiresAt,
          accessTokenRefreshAt: input.accessTokenRefreshAt,
          expiresAt: new Date(now.getTime() + config.sessionTtlSeconds * 1000),
        };
        await insertSession(app.db, {
          id: session.id,
          sub: session.sub,
          sid: session.sid,
          claims: session.claims,
          tokens: await sealTokens(session.tokens, key),
          accessTokenExpiresAt: session.accessTokenExpiresAt,
          accessTokenRefreshAt: session.accessTokenRefreshAt,
          createdAt: now,
          expiresAt: session.expiresAt,
        });
        // The cookie's lifetime is the session's, not the ID token's.
        reply.setCookie(SESSION_COOKIE, cookieValue, { ...cookieOptions, maxAge: config.sessionTtlSeconds });
        loaded.set(request, Promise.resolve(session));
        return session;
      },

      async end(request, reply) {
        const session = await store.load(request);
        if (session) await deleteSession(app.db, session.id);
        if (request.cookies[SESSION_COOKIE] !== undefined) reply.clearCookie(SESSION_COOKIE, cookieOptions);
        loaded.set(request, Promise.resolve(undefined));
        return session;
      },

      async endForLogout(target) {
        requireKey();
        return deleteSessionsForLogout(app.db, target);
      },

      async accessToken(session) {
        requireKey();
        return refresher!.accessToken(session);
      },
    };

    app.decorate('sessions', store);
  },
  { name: 'session', dependencies: ['config', 'db', 'oidc'], fastify: '5.x' },
);
