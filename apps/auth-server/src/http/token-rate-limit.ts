import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import { OAuthError } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../audit.js';
import { databaseRateLimitStore } from './database-rate-limit-store.js';
import { readFormParameters } from './oauth-form.js';

const ONE_MINUTE_MS = 60_000;

/**
 * Token endpoint requests per `client_id` and minute (TOKEN_RATE_LIMIT_PER_MINUTE; 0 = off, the
 * default, so the benchmark's single client is not throttled). Registered inside the token routes'
 * own context (`global: false`), so only `/token` is counted.
 *
 * RATE_LIMIT_STORE=memory (default) counts per instance: behind N instances a client gets up to N
 * times the limit, and a request costs no database round trip. RATE_LIMIT_STORE=database counts in
 * the shared `rate_limit_counters` table, so the limit holds across instances.
 *
 * Returns whether the limit is on (the route then adds `tokenRateLimitRouteConfig`).
 */
export async function registerTokenRateLimit(app: FastifyInstance): Promise<boolean> {
  const { tokenRequestsPerMinute, store } = app.config.rateLimits;
  if (tokenRequestsPerMinute <= 0) return false;
  await app.register(rateLimit, {
    global: false,
    ...(store === 'database' ? { store: databaseRateLimitStore(app.database.db) } : {}),
    // The key needs the body's client_id (client_secret_post, public clients): after parsing.
    hook: 'preHandler',
    keyGenerator: tokenClientKey,
    onExceeded: (request, key) => {
      // `key` is `client:<id>` or `ip:<address>` followed by the group id.
      const clientId = /^client:(.*)token$/.exec(key)?.[1];
      audit(request.log, AUDIT_EVENTS.rateLimitExceeded, {
        limit: 'token_client',
        ...(clientId === undefined ? {} : { client_id: clientId }),
        ip: request.ip,
      });
    },
    // RFC 6749 §5.2 has no code for this; the JSON error shape stays, with 429 and Retry-After
    // (set by the plugin) telling the client when to come back.
    errorResponseBuilder: (_request, context) =>
      new OAuthError('temporarily_unavailable', {
        status: context.statusCode,
        description: `too many token requests for this client; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`,
        detail: 'token rate limit exceeded',
      }),
  } satisfies RateLimitPluginOptions);
  return true;
}

export function tokenRateLimitRouteConfig(app: FastifyInstance) {
  return {
    rateLimit: {
      max: app.config.rateLimits.tokenRequestsPerMinute,
      timeWindow: ONE_MINUTE_MS,
      groupId: 'token',
    },
  };
}

/**
 * The rate-limit key of a token request: `client:<id>` when the request authenticates as that
 * client (or names a public client), otherwise `ip:<address>`, so a request carrying someone
 * else's client_id with a wrong secret spends its own IP's budget, never that client's.
 * Authentication is a keyed HMAC against the in-memory registry (or one signature check): cheap to do twice.
 */
export async function tokenClientKey(request: FastifyRequest): Promise<string> {
  try {
    const { params } = readFormParameters(request.body, ['resource', 'audience']);
    // An assertion is checked but its jti is not spent: the route authenticates it for real next.
    const { client } = await request.server.clientAuthentication.authenticate(request, 'token', params, {
      inspectOnly: true,
    });
    return `client:${client.clientId}`;
  } catch {
    return `ip:${request.ip}`;
  }
}
