import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import * as client from 'openid-client';
import type { AppDatabase } from '../db/client.js';
import { AuthorizationServerUnavailableError, NotSignedInError } from '../errors.js';
import {
  acquireRefreshLease,
  deleteSession,
  findActiveSession,
  releaseRefreshLease,
  type SessionRow,
  saveRefreshedTokens,
} from '../repositories/sessions.js';
import type { OidcProvider } from './provider.js';
import { type SessionTokens, sealTokens, unsealTokens } from './token-sealing.js';

/** When a stored access token expires and when it is due for refresh (both null: lifetime unknown). */
export interface AccessTokenSchedule {
  accessTokenExpiresAt: Date | null;
  accessTokenRefreshAt: Date | null;
}

/**
 * Refresh `lead` before expiry, lead = min(skew, half the lifetime): a 5-minute token is refreshed
 * 60 s early, a 2-second token 1 s early (not on every request). Without `expires_in` (it is only
 * RECOMMENDED, RFC 6749 §5.1) the token is used until the API rejects it.
 */
export function scheduleAccessToken(
  expiresInSeconds: number | undefined,
  now: number,
  skewSeconds: number,
): AccessTokenSchedule {
  if (expiresInSeconds === undefined) return { accessTokenExpiresAt: null, accessTokenRefreshAt: null };
  const leadSeconds = Math.min(skewSeconds, expiresInSeconds / 2);
  return {
    accessTokenExpiresAt: new Date(now + expiresInSeconds * 1000),
    accessTokenRefreshAt: new Date(now + (expiresInSeconds - leadSeconds) * 1000),
  };
}

export interface TokenRefresherOptions {
  db: AppDatabase;
  provider: OidcProvider;
  tokenKey: Uint8Array;
  log: FastifyBaseLogger;
  skewSeconds: number;
  /** Bound of one token request; the lease outlives it so no second refresh can start meanwhile. */
  httpTimeoutMs: number;
  /** How often a request waiting on another instance's refresh looks at the row again. */
  pollIntervalMs?: number;
}

/** The part of a session the refresher works on. */
export interface RefreshableSession {
  id: string;
  tokens: SessionTokens;
  accessTokenExpiresAt: Date | null;
  accessTokenRefreshAt: Date | null;
}

/**
 * Keeps a session's access token fresh with its refresh token (RFC 6749 §6).
 *
 * Refresh tokens rotate on every use, and presenting a used one is treated as theft: the provider
 * revokes the whole grant (RFC 9700 §4.14.2). So two requests of one session must never refresh
 * with the same token. Two layers make that hold:
 * - in this process, concurrent callers share one promise per session (single-flight);
 * - across instances, a lease on the session row (one conditional UPDATE) lets one instance
 *   refresh while the others wait for the row to show the new tokens.
 *
 * A refresh the provider refuses (`invalid_grant`: expired, revoked, reused) ends the session.
 * A provider that cannot be reached does not: the current token is used while it is still valid,
 * else the request fails with 502 and the next one tries again.
 */
export class TokenRefresher {
  readonly #inFlight = new Map<string, Promise<string>>();
  readonly #pollIntervalMs: number;
  readonly #leaseMs: number;

  constructor(private readonly options: TokenRefresherOptions) {
    this.#pollIntervalMs = options.pollIntervalMs ?? 50;
    // Token request bound + time to write the result, with margin.
    this.#leaseMs = options.httpTimeoutMs * 2 + 5000;
  }

  /** A valid access token for this session; NotSignedInError when it has none or its refresh failed. */
  async accessToken(session: RefreshableSession): Promise<string> {
    const { accessToken } = session.tokens;
    if (!accessToken)
      throw new NotSignedInError('This session holds no access token (OIDC_SAVE_TOKENS is off)');
    if (!isDue(session, Date.now())) return accessToken;
    let flight = this.#inFlight.get(session.id);
    if (!flight) {
      flight = this.#refresh(session).finally(() => this.#inFlight.delete(session.id));
      this.#inFlight.set(session.id, flight);
    }
    return flight;
  }

  async #refresh(session: RefreshableSession): Promise<string> {
    const { db, log } = this.options;
    const owner = randomBytes(16).toString('base64url');
    const deadline = Date.now() + this.#leaseMs + 5000;
    while (Date.now() < deadline) {
      const now = new Date();
      const leased = await acquireRefreshLease(
        db,
        session.id,
        { owner, expiresAt: new Date(now.getTime() + this.#leaseMs) },
        now,
      );
      if (leased) return this.#refreshUnderLease(leased, owner);

      // Another instance holds the lease (or the session is gone): wait for its result.
      await sleep(this.#pollIntervalMs);
      const current = await findActiveSession(db, session.id, new Date());
      if (!current) throw new NotSignedInError('The session has ended');
      if (!isDue(current, Date.now()) && current.refreshLease === null) {
        const tokens = await unsealTokens(current.tokens, this.options.tokenKey);
        if (tokens.accessToken) return tokens.accessToken;
      }
    }
    log.warn(
      { sessionIdHash: session.id.slice(0, 8) },
      'gave up waiting for another refresh of this session',
    );
    throw new AuthorizationServerUnavailableError('the token refresh did not finish in time');
  }

  async #refreshUnderLease(row: SessionRow, owner: string): Promise<string> {
    const { db, log, tokenKey, provider } = this.options;
    const tokens = await unsealTokens(row.tokens, tokenKey);
    // Someone refreshed between our read and the lease: nothing to do.
    if (!isDue(row, Date.now()) && tokens.accessToken) {
      await releaseRefreshLease(db, row.id, owner);
      return tokens.accessToken;
    }
    if (!tokens.refreshToken) {
      await deleteSession(db, row.id);
      log.info('session ended: its access token expired and there is no refresh token');
      throw new NotSignedInError('The session expired');
    }

    let response: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
    try {
      response = await client.refreshTokenGrant(provider.require().client, tokens.refreshToken);
    } catch (error) {
      if (isRefusal(error)) {
        // RFC 6749 §5.2: the grant is over (expired, revoked, or reuse detected); so is the session.
        await deleteSession(db, row.id);
        log.info(
          { error: (error as client.ResponseBodyError).error },
          'session ended: the refresh was refused',
        );
        throw new NotSignedInError('The session ended: the authorization server refused to refresh it');
      }
      await releaseRefreshLease(db, row.id, owner);
      log.warn({ reason: error instanceof Error ? error.message : String(error) }, 'token refresh failed');
      const expiresAt = row.accessTokenExpiresAt?.getTime();
      if (tokens.accessToken && expiresAt !== undefined && expiresAt > Date.now()) return tokens.accessToken;
      throw new AuthorizationServerUnavailableError('the access token could not be refreshed');
    }

    const refreshed: SessionTokens = {
      ...((response.id_token ?? tokens.idToken) ? { idToken: response.id_token ?? tokens.idToken } : {}),
      accessToken: response.access_token,
      // RFC 6749 §6: the server MAY issue a new refresh token; without one the old one stays valid.
      ...((response.refresh_token ?? tokens.refreshToken)
        ? { refreshToken: response.refresh_token ?? tokens.refreshToken }
        : {}),
    };
    const saved = await saveRefreshedTokens(db, row.id, owner, {
      tokens: await sealTokens(refreshed, tokenKey),
      ...scheduleAccessToken(response.expires_in, Date.now(), this.options.skewSeconds),
    });
    if (!saved) {
      // The lease ran out (or the session was deleted, e.g. a logout) while we waited on the provider.
      log.warn('refreshed tokens not stored: the session was ended or its refresh lease expired');
    }
    log.info('access token refreshed');
    return response.access_token;
  }
}

function isDue(session: { accessTokenRefreshAt: Date | null }, now: number): boolean {
  return session.accessTokenRefreshAt !== null && session.accessTokenRefreshAt.getTime() <= now;
}

/** An OAuth error response (400/401 with `error`), as opposed to a network failure or a 5xx. */
function isRefusal(error: unknown): boolean {
  return error instanceof client.ResponseBodyError && error.status >= 400 && error.status < 500;
}
