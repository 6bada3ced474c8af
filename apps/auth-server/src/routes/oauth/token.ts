import {
  createGrantRegistry,
  type GrantEvents,
  handleTokenRequest,
  repeatableTokenParameters,
  type TokenEndpointDependencies,
  type User,
} from '@oidc-orders/oauth-core';
import { annotateActiveSpan } from '@oidc-orders/service-kit';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { ENDPOINTS } from '../../endpoints.js';
import { readFormParameters } from '../../http/oauth-form.js';
import { registerTokenRateLimit, tokenRateLimitRouteConfig } from '../../http/token-rate-limit.js';
import { tokensIssued } from '../../metrics.js';

/**
 * RFC 6749 §3.2 token endpoint. The hot path: client authentication is a keyed HMAC against the
 * in-memory client registry, signing uses keys already imported, and the grant handler does its
 * database work in one transaction (none at all for client_credentials with a JWT access token).
 */
export const tokenRoutes: FastifyPluginAsync = async (app) => {
  const registry = createGrantRegistry();
  // RFC 8707 §2 `resource` and RFC 8693 §2.1 `audience`: the parameters the grants declare repeatable.
  const repeatable = repeatableTokenParameters(registry);
  const { stores, clock, random, signer, verifier, config } = app.protocol;
  // Directory users' entries are checked at refresh (src/plugins/directory.ts); undefined without one.
  const { directoryAccountStanding } = app;
  const services: Omit<TokenEndpointDependencies, 'events'> = {
    stores,
    clock,
    random,
    signer,
    verifier,
    config,
  };
  // Per client_id, off unless TOKEN_RATE_LIMIT_PER_MINUTE is set (src/http/token-rate-limit.ts).
  const rateLimited = await registerTokenRateLimit(app);

  app.post(
    ENDPOINTS.token.path,
    {
      onRequest: app.browserCors,
      config: rateLimited ? tokenRateLimitRouteConfig(app) : {},
    },
    async (request, reply) => {
      const { params, repeated } = readFormParameters(request.body, repeatable);
      // The trace tells which grant a slow or failed token request was, and (once known) whose.
      if (params.grant_type !== undefined) annotateActiveSpan('oauth.grant_type', params.grant_type);
      const { client, authenticated } = await app.clientAuthentication.authenticate(request, 'token', params);
      annotateActiveSpan('oauth.client_id', client.clientId);
      // RFC 9449 §5: a verified proof binds the tokens to its key (checked before any grant work).
      const dpopJkt = await app.dpop.verifyTokenRequest(request, client, ENDPOINTS.token.path);
      const response = await handleTokenRequest(
        {
          params,
          resources: repeated.resource ?? [],
          audiences: repeated.audience ?? [],
          client,
          clientAuthenticated: authenticated,
          dpopJkt,
        },
        {
          ...services,
          events: auditedGrantEvents(request.log),
          accountStanding:
            directoryAccountStanding && ((user: User) => directoryAccountStanding(user, request.log)),
        },
        registry,
      );
      tokensIssued.inc({ grant_type: params.grant_type });
      // RFC 9449 §8.2: a fresh nonce with every response, so the client's next proof is ready.
      if (client.dpopNonceRequired === true) reply.header('DPoP-Nonce', app.dpop.nonces.current());
      return reply.send(response);
    },
  );
};

/**
 * The grants' event hooks, written as audit events on the request's logger (oauth-core reports,
 * the server logs). `grantRevoked`: a used code, rotated refresh token or redeemed device code was
 * presented again (RFC 6749 §4.1.2, RFC 9700 §4.14.2) and its whole grant was revoked.
 */
function auditedGrantEvents(log: FastifyBaseLogger): GrantEvents {
  return {
    grantRevoked: (event) =>
      audit(log, AUDIT_EVENTS.tokenReuseDetected, {
        grant_id: event.grantId,
        grant_type: event.grantType,
        client_id: event.clientId,
      }),
  };
}
