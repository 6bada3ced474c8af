import { authenticateClient, pushAuthorizationRequest } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { OAUTH_FORM_BODY_LIMIT_BYTES, readFormParameters, requireFormBody } from '../http/oauth-form.js';
import { NO_STORE_HEADERS } from '../plugins/error-handler.js';
import { createPushedAuthorizationRequestStore } from '../storage/drizzle-pushed-authorization-requests.js';

/** RFC 9126 §2: the pushed authorization request endpoint (`pushed_authorization_request_endpoint`). */
export const PAR_PATH = '/par';

/**
 * RFC 9126 §2.1: the client authenticates as at the token endpoint (a public client by `client_id`)
 * and POSTs the authorization request's parameters; §2.2: 201 with `request_uri` and `expires_in`;
 * §2.3: errors as RFC 6749 §5.2 JSON. The request_uri is then good for one /authorize, for 60 s.
 */
export const pushedAuthorizationRequestRoutes: FastifyPluginAsync = async (app) => {
  const { stores, clock, random, secrets } = app.protocol;
  const store = createPushedAuthorizationRequestStore(app.database.db);

  app.post(
    PAR_PATH,
    { bodyLimit: OAUTH_FORM_BODY_LIMIT_BYTES, onRequest: requireFormBody, config: { errorStyle: 'oauth' } },
    async (request, reply) => {
      // RFC 8707 §2: `resource` may repeat; nothing else may (RFC 6749 §3.1).
      const { params, repeated } = readFormParameters(request.body, ['resource']);
      const { client } = await authenticateClient(
        { authorization: request.headers.authorization, params },
        { clients: stores.clients, secrets },
      );
      // Client authentication parameters are not authorization parameters.
      const { client_secret: _secret, ...authorization } = params;
      const response = await pushAuthorizationRequest(
        { client, params: authorization, resources: repeated.resource ?? [] },
        { store, clients: stores.clients, resources: stores.resources, clock, random },
      );
      return reply.code(201).headers(NO_STORE_HEADERS).send(response);
    },
  );
};
