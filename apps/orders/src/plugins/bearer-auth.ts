import {
  DPOP_SIGNING_ALGS,
  type DpopReplayStore,
  isOAuthError,
  type VerifiedDpopProof,
  verifyDpopProof,
} from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { BearerTokenError, type TokenScheme } from '../errors.js';
import {
  InvalidAccessTokenError,
  type VerifiedAccessToken,
  verifyAccessToken,
} from '../oidc/access-token.js';
import { VerifiedTokenCache } from '../oidc/verified-token-cache.js';
import { publicRequestUrl } from '../public-url.js';
import { dpopReplayStore } from '../repositories/dpop-replay.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * onRequest guard: a valid access token for this API (RESOURCE_ID) carrying `scope` (when given), put on
     * `request.accessToken`. Bearer, or DPoP with a proof for a DPoP-bound token. The one hook of
     * the bearer area in src/routes/guarded-areas.ts.
     */
    requireBearer(scope?: string): onRequestAsyncHookHandler;
    /**
     * The refusal of an access token this API's routes throw: its challenge names both schemes
     * and, when published, the RFC 9728 metadata URL (`resource_metadata`).
     */
    bearerTokenError(
      error: ConstructorParameters<typeof BearerTokenError>[0],
      description: string,
      scheme?: TokenScheme,
      scope?: string,
    ): BearerTokenError;
  }
  interface FastifyRequest {
    /** Set by `requireBearer` once the token (and its DPoP proof, when bound) is verified. */
    accessToken: VerifiedAccessToken | null;
  }
}

/**
 * RFC 7235 §2.1: the scheme is case-insensitive; RFC 6750 §2.1 and RFC 9449 §7.1: one space, then
 * the b64token.
 */
const CREDENTIALS = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;
const SCHEME_ONLY = /^(bearer|dpop)(\s|$)/i;

/** How often expired DPoP `jti`s are deleted; any instance's sweep serves all of them. */
export const DPOP_REPLAY_SWEEP_MS = 60_000;

interface Credentials {
  scheme: TokenScheme;
  token: string;
}

/**
 * Access tokens for the resource-server routes: RFC 6750 Bearer and RFC 9449 §7 DPoP. Failures
 * carry a challenge naming both schemes (`DPoP algs="…"` advertised): no credentials → 401 without
 * an error; a bad, expired, foreign or ID token → 401 `invalid_token`; a DPoP-bound token sent as
 * Bearer, or an unbound one sent as DPoP → 401 `invalid_token`; a bad proof → 401
 * `invalid_dpop_proof`; a valid token without the scope → 403 `insufficient_scope`.
 */
export const bearerAuthPlugin = fp(
  async (app) => {
    const realm = app.config.resourceId.replace(/["\\]/g, '');
    app.decorateRequest('accessToken', null);
    // Verified JWT access tokens, per app: a repeated token skips the signature check until its
    // `exp` or the next JWKS re-read (src/oidc/verified-token-cache.ts). Proofs are never cached.
    const cache = new VerifiedTokenCache();
    const replay = dpopReplayStore(app.db);
    sweepExpiredProofs(app, replay);

    const refuse = (
      error: ConstructorParameters<typeof BearerTokenError>[0],
      description: string,
      scheme: TokenScheme = 'Bearer',
      scope?: string,
    ) =>
      new BearerTokenError(error, description, {
        realm,
        scheme,
        dpopAlgs: DPOP_SIGNING_ALGS,
        resourceMetadata: app.config.resourceMetadataUrl,
        ...(scope ? { scope } : {}),
      });
    app.decorate('bearerTokenError', refuse);

    function extractCredentials(request: FastifyRequest): Credentials {
      const header = request.headers.authorization;
      const scheme = header === undefined ? undefined : SCHEME_ONLY.exec(header)?.[1];
      if (header === undefined || scheme === undefined) {
        throw refuse('missing', 'An access token is required');
      }
      const named: TokenScheme = scheme.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
      const match = CREDENTIALS.exec(header);
      if (!match) throw refuse('invalid_token', 'The Authorization header is malformed', named);
      return { scheme: named, token: match[2]! };
    }

    async function verifyToken({ scheme, token }: Credentials): Promise<VerifiedAccessToken> {
      // 503 while the provider's metadata (issuer, keys) is unknown: the token cannot be judged.
      const provider = app.oidc.require('Bearer authentication');
      try {
        return await verifyAccessToken(token, { provider, resourceId: app.config.resourceId, cache });
      } catch (error) {
        if (error instanceof InvalidAccessTokenError)
          throw refuse('invalid_token', error.description, scheme);
        throw error;
      }
    }

    /** RFC 9449 §7.1–§7.2: the scheme must match the binding, and a bound token needs its proof. */
    async function checkSenderConstraint(
      request: FastifyRequest,
      { scheme, token }: Credentials,
      verified: VerifiedAccessToken,
    ): Promise<void> {
      if (scheme === 'Bearer') {
        // §7.2: a DPoP-bound token presented as a bearer token is refused: without this, a stolen
        // token would work without the private key.
        if (verified.jkt !== undefined) {
          throw refuse('invalid_token', 'The access token is DPoP-bound: use the DPoP scheme', 'DPoP');
        }
        return;
      }
      if (verified.jkt === undefined) {
        throw refuse('invalid_token', 'The access token is not DPoP-bound: use the Bearer scheme', 'DPoP');
      }
      const proof = await verifyProof(request, token);
      // §4.3 step 12: the proof's key is the key the token is bound to (RFC 7638 thumbprints).
      if (proof.jkt !== verified.jkt) {
        throw refuse('invalid_token', 'The DPoP proof is signed by a key the token is not bound to', 'DPoP');
      }
    }

    async function verifyProof(request: FastifyRequest, token: string): Promise<VerifiedDpopProof> {
      const proof = request.headers.dpop;
      // §4.3 step 1: exactly one DPoP header (Node joins repeated ones, which then fails to parse).
      if (typeof proof !== 'string') throw refuse('invalid_dpop_proof', 'A DPoP proof is required', 'DPoP');
      try {
        return await verifyDpopProof(
          proof,
          {
            method: request.method,
            // §4.3 step 9: the URL the client called, as published (BASE_URL, or behind TRUST_PROXY
            // the forwarded scheme and host), never an unchecked Host header.
            url: publicRequestUrl(app.config, request),
            accessToken: token,
            now: Math.floor(Date.now() / 1000),
          },
          replay,
        );
      } catch (error) {
        if (!isOAuthError(error)) throw error;
        // The detail names the rule the proof broke; it describes the caller's own proof only.
        throw refuse(
          'invalid_dpop_proof',
          `The DPoP proof is invalid: ${error.detail ?? error.code}`,
          'DPoP',
        );
      }
    }

    app.decorate('requireBearer', (scope?: string): onRequestAsyncHookHandler => {
      return async (request) => {
        const credentials = extractCredentials(request);
        const verified = await verifyToken(credentials);
        await checkSenderConstraint(request, credentials, verified);
        if (scope !== undefined && !verified.scopes.includes(scope)) {
          throw refuse(
            'insufficient_scope',
            `The access token lacks the scope ${scope}`,
            credentials.scheme,
            scope,
          );
        }
        request.accessToken = verified;
      };
    });
  },
  { name: 'bearer-auth', dependencies: ['config', 'db', 'oidc', 'error-handler'], fastify: '5.x' },
);

/** RFC 9449 §11.1: a `jti` need only be kept while its proof's `iat` is acceptable. */
function sweepExpiredProofs(app: FastifyInstance, replay: DpopReplayStore): void {
  const timer = setInterval(() => {
    replay.deleteExpired(Math.floor(Date.now() / 1000)).catch((error: unknown) => {
      app.log.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'DPoP jti sweep failed',
      );
    });
  }, DPOP_REPLAY_SWEEP_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
