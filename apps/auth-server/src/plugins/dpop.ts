import {
  type Client,
  type Clock,
  createDpopNonces,
  DPOP_SIGNING_ALGS,
  type DpopNonces,
  type DpopReplayStore,
  invalidDpopProof,
  invalidRequest,
  verifyDpopProof,
} from '@oidc-orders/oauth-core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { deriveDpopNonceKey } from '../keys/key-encryption.js';
import { createJtiReplayStore } from '../storage/drizzle/jti-replay.js';

/** How often expired `dpop_jtis` rows are deleted (each instance; the deletes are idempotent). */
export const DPOP_REPLAY_CLEANUP_INTERVAL_MS = 5 * 60_000;

/** RFC 9449 checks as the routes use them: the token endpoint and the resources (UserInfo). */
export interface DpopService {
  readonly algorithms: readonly string[];
  readonly nonces: DpopNonces;
  readonly replay: DpopReplayStore;
  /**
   * Token endpoint (RFC 9449 §5): the `DPoP` header's proof for `POST {issuer}{path}`, checked
   * against the client's settings. Returns the key thumbprint to bind tokens to, or `null` when no
   * proof was sent (refused for a client registered with `dpop_bound_access_tokens`).
   */
  verifyTokenRequest(request: FastifyRequest, client: Client, path: string): Promise<string | null>;
  /**
   * PAR endpoint (RFC 9449 §10.1): an optional proof for `POST {issuer}{path}`; its key binds the
   * authorization code. Returns the thumbprint, or `null` when no proof was sent.
   */
  verifyOptionalProof(request: FastifyRequest, client: Client, path: string): Promise<string | null>;
  /**
   * Protected resource (RFC 9449 §7.1): a proof for this request that hashes `accessToken` (`ath`).
   * Returns the thumbprint, to compare with the token's `cnf.jkt`. Errors are the token-endpoint
   * kind (400); the resource turns them into 401 challenges (oauth-core `asResourceChallenge`).
   */
  verifyResourceRequest(
    request: FastifyRequest,
    options: { path: string; accessToken: string; nonceRequired: boolean },
  ): Promise<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    dpop: DpopService;
  }
}

/** The single `DPoP` header value; a repeated header is refused (RFC 9449 §4.3 step 1). */
export function readDpopHeader(request: FastifyRequest): string | undefined {
  const value = request.headers.dpop;
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.includes(',')) throw invalidDpopProof('more than one DPoP header');
  return value.trim();
}

export const dpopPlugin = fp<{ clock: Clock }>(
  async (app, { clock }) => {
    const issuer = app.config.issuer;
    const nonces = createDpopNonces(deriveDpopNonceKey(app.config.keyEncryptionKey), clock);
    const replay = createJtiReplayStore(app.database.db);

    const service: DpopService = {
      algorithms: DPOP_SIGNING_ALGS,
      nonces,
      replay,
      async verifyTokenRequest(request, client, path) {
        // RFC 9449 §5.2: "the authorization server MUST reject token requests from this client
        // that do not contain the DPoP header."
        if (readDpopHeader(request) === undefined && client.dpopBoundAccessTokens === true) {
          throw invalidRequest('this client must send a DPoP proof', 'dpop_bound_access_tokens');
        }
        return service.verifyOptionalProof(request, client, path);
      },
      async verifyOptionalProof(request, client, path) {
        const proof = readDpopHeader(request);
        if (proof === undefined) return null;
        const verified = await verifyDpopProof(
          proof,
          {
            method: request.method,
            url: `${issuer}${path}`,
            nonces: client.dpopNonceRequired === true ? nonces : null,
            now: clock.nowSeconds(),
          },
          replay,
        );
        return verified.jkt;
      },
      async verifyResourceRequest(request, options) {
        const proof = readDpopHeader(request);
        if (proof === undefined) throw invalidDpopProof('DPoP scheme without a DPoP proof');
        const verified = await verifyDpopProof(
          proof,
          {
            method: request.method,
            url: `${issuer}${options.path}`,
            accessToken: options.accessToken,
            nonces: options.nonceRequired ? nonces : null,
            now: clock.nowSeconds(),
          },
          replay,
        );
        return verified.jkt;
      },
    };
    app.decorate('dpop', service);

    // Housekeeping: replay entries are useless once their proof would be too old anyway.
    const timer = setInterval(() => {
      replay
        .deleteExpired(clock.nowSeconds())
        .catch((error) => app.log.warn({ err: error }, 'deleting expired DPoP jti entries failed'));
    }, DPOP_REPLAY_CLEANUP_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'dpop', fastify: '5.x', dependencies: ['config', 'db'] },
);
