import * as client from 'openid-client';
import { CliError, EXIT, isNetworkError, unreachable } from './errors.js';
import { isLoopback, type Settings } from './settings.js';
import type { StoredSession, TokenStore } from './token-store.js';

/** Seconds before expiry at which an access token is refreshed instead of used. */
const EXPIRY_MARGIN_SECONDS = 30;
/** Bounds every request to the authorization server. */
const REQUEST_TIMEOUT_SECONDS = 15;

/**
 * Reads the issuer's discovery document (openid-client v6). The CLI is a public client: it
 * authenticates with `client_id` only (`None()`), as RFC 8628 §3.1 allows. Plain http is allowed
 * only for an issuer on this machine (settings.ts refuses anything else).
 */
export async function discover(settings: Settings): Promise<client.Configuration> {
  try {
    const configuration = await client.discovery(
      settings.issuer,
      settings.clientId,
      undefined,
      client.None(),
      {
        execute:
          settings.issuer.protocol === 'http:' && isLoopback(settings.issuer)
            ? [client.allowInsecureRequests]
            : [],
        timeout: REQUEST_TIMEOUT_SECONDS,
      },
    );
    configuration.timeout = REQUEST_TIMEOUT_SECONDS;
    return configuration;
  } catch (error) {
    throw describeServerError(error, settings, 'reading the discovery document');
  }
}

/** A CliError for a failure talking to the authorization server (`while` says what was going on). */
export function describeServerError(error: unknown, settings: Settings, doing: string): CliError {
  if (error instanceof CliError) return error;
  if (isNetworkError(error)) return unreachable('authorization server', settings.issuerId);
  if (error instanceof client.ResponseBodyError) {
    if (error.status >= 502 && error.status <= 504)
      return unreachable('authorization server', settings.issuerId);
    const description = error.error_description ? `: ${error.error_description}` : '';
    return new CliError(
      `The authorization server refused ${doing} (${error.error}${description}).`,
      EXIT.authorization,
    );
  }
  if (error instanceof client.ClientError) {
    const status = (error.cause as { status?: unknown } | undefined)?.status;
    if (typeof status === 'number' && status >= 502 && status <= 504) {
      return unreachable('authorization server', settings.issuerId);
    }
    return new CliError(
      `Unexpected answer from the authorization server while ${doing}: ${error.message}.`,
      EXIT.failure,
    );
  }
  return new CliError(`Failed while ${doing}: ${(error as Error).message ?? String(error)}`, EXIT.failure);
}

/** The session as stored after a token response (login or refresh). */
export function sessionFromTokens(
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  settings: Settings,
  previous: StoredSession | null,
  nowSeconds: number,
): StoredSession {
  const claims = tokens.claims();
  return {
    issuer: settings.issuerId,
    clientId: settings.clientId,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: nowSeconds + (tokens.expires_in ?? 300),
    // Every refresh rotates the token; keep the old one only if the server did not send a new one.
    refreshToken: tokens.refresh_token ?? previous?.refreshToken ?? null,
    idToken: tokens.id_token ?? previous?.idToken ?? null,
    scope: tokens.scope ?? previous?.scope ?? '',
    sub: claims?.sub ?? previous?.sub ?? '',
    name: typeof claims?.name === 'string' ? claims.name : (previous?.name ?? null),
    email: typeof claims?.email === 'string' ? claims.email : (previous?.email ?? null),
  };
}

const notLoggedIn = (settings: Settings, why = 'You are not signed in') =>
  new CliError(`${why} to ${settings.issuerId}.`, EXIT.notLoggedIn, 'Run `orders login`.');

/** The stored session for this issuer and client, or a "not logged in" CliError. */
export async function requireSession(store: TokenStore, settings: Settings): Promise<StoredSession> {
  const session = await store.read();
  if (session === null || session.issuer !== settings.issuerId || session.clientId !== settings.clientId) {
    throw notLoggedIn(settings);
  }
  return session;
}

export interface SessionContext {
  settings: Settings;
  store: TokenStore;
  configuration: client.Configuration;
  nowSeconds: () => number;
}

/**
 * A session whose access token is usable: the stored one while it has more than 30 s left (unless
 * `force`, after the API said 401), else refreshed with the refresh token, and the rotated tokens are
 * saved before anything else happens. The refresh runs under the file lock and re-reads the file
 * first, so if another `orders` process refreshed meanwhile its tokens are used instead.
 */
export async function freshSession(
  context: SessionContext,
  options: { force?: boolean } = {},
): Promise<StoredSession> {
  const { settings, store } = context;
  const current = await requireSession(store, settings);
  if (!options.force && current.accessTokenExpiresAt - EXPIRY_MARGIN_SECONDS > context.nowSeconds())
    return current;

  return store.withRefreshLock(async () => {
    const latest = await requireSession(store, settings);
    if (latest.refreshToken !== current.refreshToken) return latest;
    if (latest.refreshToken === null) {
      throw notLoggedIn(settings, 'Your session has expired (no refresh token was issued)');
    }
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
    try {
      tokens = await client.refreshTokenGrant(context.configuration, latest.refreshToken);
    } catch (error) {
      if (error instanceof client.ResponseBodyError && error.error === 'invalid_grant') {
        // Revoked, expired or already rotated: the stored session is worthless now.
        await store.remove();
        throw notLoggedIn(settings, 'Your session has ended (revoked or expired)');
      }
      throw describeServerError(error, settings, 'refreshing the session');
    }
    const refreshed = sessionFromTokens(tokens, settings, latest, context.nowSeconds());
    await store.write(refreshed);
    return refreshed;
  });
}
