import cors, { type FastifyCorsOptions } from '@fastify/cors';
import { isPublicClient } from '@oidc-orders/oauth-core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * CORS for the endpoints a browser-based (public) client calls directly: token, userinfo and
 * revocation. The allowed origins are the union of the public clients' `allowed_cors_origins`,
 * read from the in-memory client registry (so a reseed applies). Every other origin, and every
 * other path (authorization and login pages, introspection, discovery aside), gets no
 * `Access-Control-Allow-Origin` header. Confidential clients keep their secret on a server and do
 * not need CORS, so their origins are not honoured.
 */
export const CORS_PATHS: ReadonlySet<string> = new Set(['/token', '/userinfo', '/revoke']);

const DENY: FastifyCorsOptions = { origin: false };

export const corsPlugin = fp(
  async (app) => {
    const allowedOrigins = async (): Promise<ReadonlySet<string>> => {
      const clients = await app.stores.listClients();
      return new Set(
        clients.filter((client) => isPublicClient(client)).flatMap((client) => client.allowedCorsOrigins),
      );
    };

    const allow = (origin: string): FastifyCorsOptions => ({
      origin,
      methods: ['GET', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type', 'DPoP'],
      exposedHeaders: ['WWW-Authenticate', 'DPoP-Nonce'],
      // These endpoints authenticate with headers or form parameters, never cookies.
      credentials: false,
      maxAge: 600,
    });

    // The callback form: a request without an Origin header (every server-side client) is answered
    // at once, without a promise or splitting its URL (issue 20: CORS was 2 % of a token request).
    const optionsFor = (
      request: FastifyRequest,
      callback: (error: Error | null, options: FastifyCorsOptions) => void,
    ) => {
      const origin = request.headers.origin;
      if (origin === undefined) return callback(null, DENY);
      const queryStart = request.url.indexOf('?');
      const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
      if (!CORS_PATHS.has(path)) return callback(null, DENY);
      allowedOrigins().then(
        (origins) => callback(null, origins.has(origin) ? allow(origin) : DENY),
        (error: Error) => callback(error, DENY),
      );
    };

    await app.register(cors, { delegator: optionsFor });
  },
  { name: 'cors', fastify: '5.x', dependencies: ['stores'] },
);
