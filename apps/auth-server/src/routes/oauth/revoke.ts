import { invalidRequest, revokeToken } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { ENDPOINTS } from '../../endpoints.js';
import { readFormParameters } from '../../http/oauth-form.js';

/**
 * RFC 7009 token revocation. §2.1: the client authenticates as at the token endpoint (a public
 * client identifies itself with `client_id`). §2.2: 200 whether or not the token was known, valid or
 * someone else's, so the endpoint cannot be used to probe tokens.
 */
export const revocationRoutes: FastifyPluginAsync = async (app) => {
  const { stores, verifier, clock, config } = app.protocol;

  app.post(ENDPOINTS.revocation.path, { onRequest: app.browserCors }, async (request, reply) => {
    const { params } = readFormParameters(request.body);
    const { client } = await app.clientAuthentication.authenticate(request, 'revocation', params);
    const token = params.token;
    if (token === undefined) throw invalidRequest('token is required');
    await revokeToken(token, params.token_type_hint, client, { stores, verifier, clock, config });
    audit(request.log, AUDIT_EVENTS.tokenRevoked, {
      client_id: client.clientId,
      ...(params.token_type_hint ? { token_type_hint: params.token_type_hint.slice(0, 40) } : {}),
    });
    // RFC 7009 §2.2 says only "HTTP status code 200"; an empty JSON object lets JSON client
    // libraries that parse every answer (and stop at a parse error) carry on.
    return reply.code(200).type('application/json').send({});
  });
};
