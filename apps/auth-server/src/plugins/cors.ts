import { isPublicClient } from '@oidc-orders/oauth-core';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { BROWSER_CORS_ENDPOINTS } from '../endpoints.js';

/**
 * CORS for the endpoints a browser-based (public) client calls directly: the rows of
 * src/endpoints.ts marked `browserCors` (token, userinfo and revocation; OAuth 2.0 for Browser-Based Applications §6.3.4: the token endpoint must answer
 * cross-origin requests). The allowed origins are the union of the public clients'
 * `allowed_cors_origins`, read from the in-memory client registry (so a reseed applies). Every
 * other origin, and every other path (authorization and login pages, introspection), gets no
 * `Access-Control-Allow-Origin` header; discovery and the JWKS set their own `*`. Confidential
 * clients keep their secret on a server and do not need CORS, so their origins are not honoured.
 *
 * Written here rather than with @fastify/cors (a hot-path saving): that plugin is a hook on every
 * request of the server and, with options chosen per request, spread its defaults into new objects
 * each time; in the bench's pinned A/B runs it cost about 25 µs of CPU per request, on every route.
 * These are three routes whose policy is one set lookup: the hook below runs only on them
 * (route-level `onRequest`), and a request without `Origin` (every server-side client) costs one
 * header.
 */

/** What a preflight allows: the methods and request headers these endpoints take. */
const ALLOWED_METHODS = 'GET, POST';
const ALLOWED_REQUEST_HEADERS = 'Authorization, Content-Type, DPoP';
/** Response headers a browser client must read: the error challenge and RFC 9449 §8's nonce. */
const EXPOSED_RESPONSE_HEADERS = 'WWW-Authenticate, DPoP-Nonce';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

declare module 'fastify' {
  interface FastifyInstance {
    /** Route-level `onRequest` hook of the CORS endpoints (first, so error answers carry it too). */
    browserCors: onRequestHookHandler;
  }
}

export const corsPlugin = fp(
  async (app) => {
    const isAllowedOrigin = async (origin: string): Promise<boolean> => {
      const clients = await app.stores.listClients();
      return clients.some((client) => isPublicClient(client) && client.allowedCorsOrigins.includes(origin));
    };

    // The actual request (Fetch §3.2.3). A callback hook: a request without Origin makes no promise.
    const browserCors: onRequestHookHandler = (request, reply, done) => {
      // The answer depends on Origin, so shared caches must key on it (Fetch §3.2.5).
      reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin === undefined) return done();
      isAllowedOrigin(origin).then((allowed) => {
        if (allowed) {
          reply.header('access-control-allow-origin', origin);
          reply.header('access-control-expose-headers', EXPOSED_RESPONSE_HEADERS);
        }
        done();
      }, done);
    };
    app.decorate('browserCors', browserCors);

    // The preflight (Fetch §3.2.2): OPTIONS with Origin and Access-Control-Request-Method. No
    // credentials are allowed: these endpoints authenticate with headers or form parameters.
    const preflight = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin === undefined || request.headers['access-control-request-method'] === undefined) {
        return reply.code(400).type('text/plain; charset=utf-8').send('Invalid CORS preflight request');
      }
      if (await isAllowedOrigin(origin)) {
        reply.headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': ALLOWED_METHODS,
          'access-control-allow-headers': ALLOWED_REQUEST_HEADERS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
        });
      }
      // Any other origin gets no Access-Control-Allow-* header, which the browser reads as "no".
      return reply.code(204).header('content-length', '0').send();
    };
    for (const endpoint of BROWSER_CORS_ENDPOINTS) app.options(endpoint.path, preflight);
  },
  { name: 'cors', fastify: '5.x', dependencies: ['stores'] },
);
