import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';

/** The bearer API a public client calls from its own origin: `GET /orders` and `GET /orders/:id`. */
const BEARER_API_PATHS = ['/orders', '/orders/:id'] as const;

/** RFC 6750 §3: the script reads the challenge to tell an expired token from a missing scope. */
const EXPOSED_RESPONSE_HEADERS = 'WWW-Authenticate';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

declare module 'fastify' {
  interface FastifyInstance {
    /** `onRequest` hook of the bearer API's areas (before their guard, so a 401 carries it too). */
    apiCors: onRequestHookHandler;
  }
}

/**
 * CORS for the resource-server routes only, for the origins in ALLOWED_CORS_ORIGINS (a public
 * single-page client that holds its own access token). Everything else gets no
 * `Access-Control-Allow-Origin`, whatever the origin: the BFF's `X-CSRF: 1` defence relies on
 * no cross-origin script ever being granted a preflight there, and the API-key routes are for
 * back-office tools, not browsers. No credentials: the bearer API never reads cookies.
 *
 * A hook of the two bearer areas (src/routes/guarded-areas.ts) and two preflight routes, rather than
 * @fastify/cors on every request of the service: with options chosen per request that plugin
 * spread new option objects on each one, about 25 µs of CPU per request in the bench's pinned runs
 * of the auth server, where the same change was measured.
 */
export const apiCorsPlugin = fp(
  async (app) => {
    const allowedOrigins: ReadonlySet<string> = new Set(app.config.allowedCorsOrigins);

    // The actual request (Fetch §3.2.3): only GET is offered.
    const apiCors: onRequestHookHandler = (request, reply, done) => {
      // The answer depends on Origin, so shared caches must key on it (Fetch §3.2.5).
      reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin !== undefined && request.method === 'GET' && allowedOrigins.has(origin)) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-expose-headers', EXPOSED_RESPONSE_HEADERS);
      }
      done();
    };
    app.decorate('apiCors', apiCors);

    // The preflight (Fetch §3.2.2) names the method of the request it prepares: GET, or nothing.
    const preflight = (request: FastifyRequest, reply: FastifyReply) => {
      const origin = request.headers.origin;
      const allowed =
        origin !== undefined &&
        allowedOrigins.has(origin) &&
        request.headers['access-control-request-method'] === 'GET';
      if (!allowed) return reply.callNotFound();
      return reply
        .code(204)
        .headers({
          vary: 'Origin',
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'GET',
          'access-control-allow-headers': 'Authorization',
          'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
          'content-length': '0',
        })
        .send();
    };
    for (const path of BEARER_API_PATHS) app.options(path, preflight);
  },
  { name: 'api-cors', dependencies: ['config'], fastify: '5.x' },
);
