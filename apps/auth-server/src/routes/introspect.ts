import { authenticateIntrospectionCaller, introspectToken, invalidRequest } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { OAUTH_FORM_BODY_LIMIT_BYTES, readFormParameters, requireFormBody } from '../http/oauth-form.js';
import { NO_STORE_HEADERS } from '../plugins/error-handler.js';

/**
 * RFC 7662 token introspection. §2.1: the endpoint requires authorization; callers are resources
 * (their `id` and `secret` in HTTP Basic) or confidential clients. A token that is not addressed to
 * the caller is reported as `{active: false}` exactly like an unknown one (§2.2).
 */
export const introspectionRoutes: FastifyPluginAsync = async (app) => {
  const { stores, verifier, clock, config, secrets } = app.protocol;

  app.post(
    '/introspect',
    { bodyLimit: OAUTH_FORM_BODY_LIMIT_BYTES, onRequest: requireFormBody, config: { errorStyle: 'oauth' } },
    async (request, reply) => {
      const { params } = readFormParameters(request.body);
      const caller = await authenticateIntrospectionCaller(
        { authorization: request.headers.authorization, params },
        { clients: stores.clients, resources: stores.resources, secrets },
      );
      const token = params.token;
      if (token === undefined) throw invalidRequest('token is required');
      const response = await introspectToken(token, params.token_type_hint, caller, {
        stores,
        verifier,
        clock,
        config,
      });
      // The answer describes a credential: never cached (RFC 7662 §4 privacy considerations).
      return reply.headers(NO_STORE_HEADERS).send(response);
    },
  );
};
