import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** The bearer API a public client calls from its own origin: `GET /orders` and `GET /orders/:id`. */
const BEARER_API_PATH = /^\/orders(\/[^/]+)?$/;

const DENY: FastifyCorsOptions = { origin: false };

/**
 * CORS for the resource-server routes only, for the origins in ALLOWED_CORS_ORIGINS (a public
 * single-page client that holds its own access token). Everything else gets no
 * `Access-Control-Allow-Origin`, whatever the origin: the BFF's `X-CSRF: 1` defence relies on
 * no cross-origin script ever being granted a preflight there, and the API-key routes are for
 * back-office tools, not browsers. No credentials: the bearer API never reads cookies.
 */
export const apiCorsPlugin = fp(
  async (app) => {
    const allowedOrigins: ReadonlySet<string> = new Set(app.config.allowedCorsOrigins);

    const isBearerApiGet = (request: FastifyRequest): boolean => {
      const path = request.url.split('?')[0] ?? '';
      if (!BEARER_API_PATH.test(path)) return false;
      // A preflight names the method of the request it prepares (Fetch §4.8 CORS-preflight fetch).
      const method =
        request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : request.method;
      return method === 'GET';
    };

    const optionsFor = async (request: FastifyRequest): Promise<FastifyCorsOptions> => {
      const origin = request.headers.origin;
      if (origin === undefined || !allowedOrigins.has(origin) || !isBearerApiGet(request)) return DENY;
      return {
        origin,
        methods: ['GET'],
        allowedHeaders: ['Authorization'],
        // RFC 6750 §3: the script reads the challenge to tell an expired token from a missing scope.
        exposedHeaders: ['WWW-Authenticate'],
        credentials: false,
        maxAge: 600,
      };
    };

    await app.register(cors, { delegator: optionsFor });
  },
  { name: 'api-cors', dependencies: ['config'], fastify: '5.x' },
);
