import {
  acceptsIntrospectionJwt,
  INTROSPECTION_JWT_MEDIA_TYPE,
  introspectionJwtClaims,
  introspectToken,
  invalidRequest,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { readFormParameters } from '../../http/oauth-form.js';

/**
 * RFC 7662 token introspection. §2.1: the endpoint requires authorization; callers are resources
 * (their `id` and `secret`, HTTP Basic or in the body) or clients authenticating as at the token
 * endpoint (public clients cannot). A token that is not addressed to the caller is reported as
 * `{active: false}` exactly like an unknown one (§2.2). RFC 9701: a caller sending
 * `Accept: application/token-introspection+jwt` gets the answer as a JWT signed with the server's key.
 */
export const introspectionRoutes: FastifyPluginAsync = async (app) => {
  const { stores, verifier, clock, config, signer } = app.protocol;

  app.post(ENDPOINTS.introspection.path, async (request, reply) => {
    const { params } = readFormParameters(request.body);
    const caller = await app.clientAuthentication.introspectionCaller(request, params);
    const token = params.token;
    if (token === undefined) throw invalidRequest('token is required');
    const response = await introspectToken(token, params.token_type_hint, caller, {
      stores,
      verifier,
      clock,
      config,
    });
    if (!acceptsIntrospectionJwt(request.headers.accept)) return reply.send(response);
    const claims = introspectionJwtClaims(response, {
      issuer: app.config.issuer,
      caller,
      now: clock.nowSeconds(),
    });
    // RFC 9701 §5: signed (ES256, this server's default access-token algorithm), never encrypted here.
    const jwt = await signer.sign(claims, { alg: 'ES256', typ: 'token-introspection+jwt' });
    return reply.type(INTROSPECTION_JWT_MEDIA_TYPE).send(jwt);
  });
};
