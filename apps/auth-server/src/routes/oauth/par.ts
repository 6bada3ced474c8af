import {
  type Client,
  invalidRequest,
  pushAuthorizationRequest,
  splitRequestObjectParams,
  verifyRequestObject,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { readFormParameters } from '../../http/oauth-form.js';
import { createPushedAuthorizationRequestStore } from '../../storage/drizzle/pushed-authorization-requests.js';

/**
 * RFC 9126 §2.1: the client authenticates as at the token endpoint (a public client by `client_id`)
 * and POSTs the authorization request's parameters, or a signed request object carrying them
 * (RFC 9101, `request`); §2.2: 201 with `request_uri` and `expires_in`; §2.3: errors as RFC 6749
 * §5.2 JSON. A DPoP proof (RFC 9449 §10.1) or `dpop_jkt` binds the code to a key. The request_uri
 * then opens /authorize for 60 s, until the code it leads to spends it.
 */
export const pushedAuthorizationRequestRoutes: FastifyPluginAsync = async (app) => {
  const { stores, clock, random } = app.protocol;
  const store = createPushedAuthorizationRequestStore(app.database.db);

  /** The authorization parameters: the request object's (RFC 9101 §5: only those), or the form's. */
  async function authorizationParameters(
    client: Client,
    form: Record<string, string>,
    formResources: string[],
  ): Promise<{ params: Record<string, string>; resources: string[] }> {
    // Client authentication parameters are not authorization parameters.
    const {
      client_secret: _secret,
      client_assertion: _assertion,
      client_assertion_type: _assertionType,
      ...outer
    } = form;
    if (outer.request === undefined) {
      if (client.requireSignedRequestObject === true) {
        throw invalidRequest('this client must send a signed request object (RFC 9101)');
      }
      return { params: outer, resources: formResources };
    }
    const { keys, replay } = app.clientAuthentication;
    const objectParams = await verifyRequestObject(outer.request, client, {
      keys,
      replay,
      issuer: app.config.issuer,
      clock,
    });
    return splitRequestObjectParams(objectParams);
  }

  /** RFC 9449 §10.1: a proof at PAR binds the code to its key; a `dpop_jkt` sent too must agree. */
  async function withDpopBinding(request: FastifyRequest, client: Client, params: Record<string, string>) {
    const jkt = await app.dpop.verifyOptionalProof(request, client, ENDPOINTS.pushedAuthorization.path);
    if (jkt === null) return params;
    if (params.dpop_jkt !== undefined && params.dpop_jkt !== jkt) {
      throw invalidRequest('dpop_jkt does not match the DPoP proof');
    }
    return { ...params, dpop_jkt: jkt };
  }

  app.post(ENDPOINTS.pushedAuthorization.path, async (request, reply) => {
    // RFC 8707 §2: `resource` may repeat; nothing else may (RFC 6749 §3.1).
    const { params, repeated } = readFormParameters(request.body, ['resource']);
    const { client } = await app.clientAuthentication.authenticate(request, 'pushed_authorization', params);
    const authorization = await authorizationParameters(client, params, repeated.resource ?? []);
    const response = await pushAuthorizationRequest(
      {
        client,
        params: await withDpopBinding(request, client, authorization.params),
        resources: authorization.resources,
      },
      { store, clients: stores.clients, resources: stores.resources, clock, random },
    );
    return reply.code(201).send(response);
  });
};
