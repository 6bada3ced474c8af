import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { BearerTokenError } from '../errors.js';
import {
  InvalidAccessTokenError,
  type VerifiedAccessToken,
  verifyAccessToken,
} from '../oidc/access-token.js';
import { VerifiedTokenCache } from '../oidc/verified-token-cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * onRequest guard: a valid access token for this API (RESOURCE_ID) carrying `scope`, put on
     * `request.accessToken`. Routes opt in, beside or instead of `requireApiKey`.
     */
    requireBearer(scope: string): onRequestAsyncHookHandler;
  }
  interface FastifyRequest {
    /** Set by `requireBearer` once the token is verified. */
    accessToken: VerifiedAccessToken | null;
  }
}

/** RFC 7235 §2.1: the scheme is case-insensitive; RFC 6750 §2.1: one space, then the b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * Bearer tokens (RFC 6750) for the resource-server routes. Failures carry the RFC 6750 §3
 * challenge: no credentials → 401 `Bearer realm=…`; a bad, expired, foreign or ID token → 401
 * `error="invalid_token"`; a valid token without the scope → 403 `error="insufficient_scope"`.
 */
export default fp(
  async (app) => {
    const realm = app.config.resourceId.replace(/["\\]/g, '');
    app.decorateRequest('accessToken', null);
    // Verified JWT access tokens, per app: a repeated token skips the signature check until its
    // `exp` or the next JWKS re-read (src/oidc/verified-token-cache.ts).
    const cache = new VerifiedTokenCache();

    function extractToken(request: FastifyRequest): string {
      const header = request.headers.authorization;
      if (header === undefined || !/^bearer(\s|$)/i.test(header)) {
        throw new BearerTokenError('missing', 'A bearer access token is required', { realm });
      }
      const match = BEARER.exec(header);
      if (!match)
        throw new BearerTokenError('invalid_token', 'The Authorization header is malformed', { realm });
      return match[1]!;
    }

    app.decorate('requireBearer', (scope: string): onRequestAsyncHookHandler => {
      return async (request) => {
        const token = extractToken(request);
        // 503 while the provider's metadata (issuer, keys) is unknown: the token cannot be judged.
        const provider = app.oidc.require('Bearer authentication');
        let verified: VerifiedAccessToken;
        try {
          verified = await verifyAccessToken(token, { provider, resourceId: app.config.resourceId, cache });
        } catch (error) {
          if (error instanceof InvalidAccessTokenError) {
            throw new BearerTokenError('invalid_token', error.description, { realm });
          }
          throw error;
        }
        if (!verified.scopes.includes(scope)) {
          throw new BearerTokenError('insufficient_scope', `The access token lacks the scope ${scope}`, {
            realm,
            scope,
          });
        }
        request.accessToken = verified;
      };
    });
  },
  { name: 'bearer-auth', dependencies: ['config', 'oidc', 'error-handler'], fastify: '5.x' },
);
