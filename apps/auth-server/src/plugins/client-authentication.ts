import {
  type AuthenticatedClient,
  authenticateClient,
  authenticateIntrospectionCaller,
  type Client,
  type ClientAuthenticationEndpoint,
  type ClientKeySource,
  type Clock,
  type IntrospectionCaller,
  invalidClient,
  type JtiReplayStore,
} from '@oidc-orders/oauth-core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import { clientAuthenticationEndpointUrls } from '../endpoints.js';
import { type GuardedFetchOptions, guardedFetchJson, guardedFetchText } from '../http/guarded-fetch.js';
import { createJtiReplayStore } from '../storage/drizzle/jti-replay.js';

/** How the server reads a client's `jwks_uri` (README "Client keys"). */
export interface ClientKeyOptions {
  /** Give up on a `jwks_uri` fetch after this long. */
  fetchTimeoutMs?: number;
  /** Keep a fetched key set this long before fetching again. */
  cacheMaxAgeMs?: number;
  /** An assertion with an unknown `kid` re-reads the set at most this often (protects the client's host). */
  refreshCooldownMs?: number;
  /**
   * Origins a registered (RFC 7591) client's `jwks_uri` may use over plain http or on a private
   * address (seed `client_registration.fetch_origins`); others must be public https.
   */
  registeredClientFetchOrigins?: readonly string[];
  /** Test seam: DNS answers for the guarded fetch. */
  resolve?: GuardedFetchOptions['resolve'];
}

/** The largest JWK Set read from a registered client's `jwks_uri`. */
const REGISTERED_JWKS_MAX_BYTES = 64 * 1024;
/** The largest request object read from a `request_uri` (oauth-core refuses longer objects anyway). */
const REQUEST_OBJECT_MAX_BYTES = 32 * 1024;

export const CLIENT_JWKS_DEFAULTS = {
  fetchTimeoutMs: 5_000,
  cacheMaxAgeMs: 10 * 60_000,
  refreshCooldownMs: 30_000,
} as const;

/** Client authentication as every route uses it (oauth-core `authenticateClient` with this server's keys and stores). */
export interface ClientAuthenticationService {
  readonly keys: ClientKeySource;
  readonly replay: JtiReplayStore;
  /** GETs the request object at a `request_uri` the client registered (RFC 9101 §5.2), under the SSRF guards. */
  fetchRequestObject(url: string, client: Client): Promise<string>;
  /**
   * Authenticates the client of `request` at `endpoint` from the parsed form `params`.
   * `inspectOnly` checks an assertion without spending its `jti` (rate-limit keys).
   */
  authenticate(
    request: FastifyRequest,
    endpoint: ClientAuthenticationEndpoint,
    params: Readonly<Record<string, string | undefined>>,
    options?: { inspectOnly?: boolean },
  ): Promise<AuthenticatedClient>;
  /** The introspection endpoint's caller: a resource or a client. */
  introspectionCaller(
    request: FastifyRequest,
    params: Readonly<Record<string, string | undefined>>,
  ): Promise<IntrospectionCaller>;
}

declare module 'fastify' {
  interface FastifyInstance {
    clientAuthentication: ClientAuthenticationService;
  }
}

/**
 * A client's keys as jose resolvers, one per client, rebuilt when its registration changes: inline
 * `jwks` as a local set; `jwks_uri` as jose's remote set (fetched with a timeout, cached, and
 * re-read when an assertion names an unknown `kid`, at most once per cooldown).
 */
export function createClientKeySource(options: ClientKeyOptions = {}): ClientKeySource {
  const settings = { ...CLIENT_JWKS_DEFAULTS, ...options };
  const cache = new Map<string, { registration: string; getKey: JWTVerifyGetKey }>();
  return {
    keysFor(client) {
      const registration = client.jwksUri ?? JSON.stringify(client.jwks ?? null);
      const cached = cache.get(client.clientId);
      if (cached?.registration === registration) return cached.getKey;
      let getKey: JWTVerifyGetKey;
      if (client.jwksUri != null) {
        getKey = createRemoteJWKSet(new URL(client.jwksUri), {
          timeoutDuration: settings.fetchTimeoutMs,
          cacheMaxAge: settings.cacheMaxAgeMs,
          cooldownDuration: settings.refreshCooldownMs,
          // A self-registered client chose this URL: fetched under the SSRF guards (src/http/guarded-fetch.ts).
          ...(client.dynamicallyRegistered ? { [customFetch]: guardedJwksFetch(settings) } : {}),
        });
      } else if (client.jwks != null && client.jwks.keys.length > 0) {
        getKey = createLocalJWKSet({ keys: [...client.jwks.keys] });
      } else {
        throw invalidClient('the client registered no keys');
      }
      cache.set(client.clientId, { registration, getKey });
      return getKey;
    },
  };
}

function guardedJwksFetch(settings: ClientKeyOptions & { fetchTimeoutMs: number }) {
  return async (url: string): Promise<Response> => {
    const { body } = await guardedFetchJson(url, {
      trustedOrigins: settings.registeredClientFetchOrigins ?? [],
      maxBytes: REGISTERED_JWKS_MAX_BYTES,
      timeoutMs: settings.fetchTimeoutMs,
      ...(settings.resolve ? { resolve: settings.resolve } : {}),
    });
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
}

/**
 * A request object by reference, always through the guarded fetch (src/http/guarded-fetch.ts): a
 * registered client's URLs may use only the seed's `client_registration.fetch_origins` over plain
 * http or private addresses; a seed client's own `request_uris` were written by the operator, so
 * their origins are trusted like its `jwks_uri`.
 */
export function createRequestObjectFetch(settings: ClientKeyOptions = {}) {
  return (url: string, client: Client): Promise<string> => {
    const trustedOrigins = client.dynamicallyRegistered
      ? (settings.registeredClientFetchOrigins ?? [])
      : (client.requestUris ?? []).filter((uri) => URL.canParse(uri)).map((uri) => new URL(uri).origin);
    return guardedFetchText(url, {
      trustedOrigins,
      maxBytes: REQUEST_OBJECT_MAX_BYTES,
      timeoutMs: settings.fetchTimeoutMs ?? CLIENT_JWKS_DEFAULTS.fetchTimeoutMs,
      ...(settings.resolve ? { resolve: settings.resolve } : {}),
    });
  };
}

export const clientAuthenticationPlugin = fp<{ clock: Clock; keys?: ClientKeyOptions }>(
  async (app, { clock, keys: keyOptions }) => {
    const { stores, secrets } = app.protocol;
    const keys = createClientKeySource(keyOptions);
    const replay = createJtiReplayStore(app.database.db);
    const endpointUrls = clientAuthenticationEndpointUrls(app.config.issuer);
    const deps = (inspectOnly: boolean) => ({
      clients: stores.clients,
      resources: stores.resources,
      secrets,
      assertions: {
        keys,
        replay: inspectOnly ? null : replay,
        issuer: app.config.issuer,
        clock,
        endpointUrls,
      },
    });

    app.decorate('clientAuthentication', {
      keys,
      fetchRequestObject: createRequestObjectFetch(keyOptions),
      replay,
      authenticate(request, endpoint, params, options) {
        return authenticateClient(
          { authorization: request.headers.authorization, params, endpoint },
          deps(options?.inspectOnly === true),
        );
      },
      introspectionCaller(request, params) {
        return authenticateIntrospectionCaller(
          { authorization: request.headers.authorization, params, endpoint: 'introspection' },
          deps(false),
        );
      },
    } satisfies ClientAuthenticationService);
  },
  { name: 'client-authentication', fastify: '5.x', dependencies: ['config', 'db', 'protocol'] },
);
