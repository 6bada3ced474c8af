import { authorizeDevice, type DeviceAuthorizationSettings } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { readFormParameters } from '../../http/oauth-form.js';

/**
 * RFC 8628 §3.1 device authorization endpoint (discovery `device_authorization_endpoint`).
 * Client authentication as at the token endpoint (RFC 8628 §3.1: "the client […] authenticates
 * with the authorization server as described in Section 3.2.1 of [RFC6749]"; public clients send
 * `client_id`); errors as RFC 6749 §5.2 JSON. The verification URI is built from ISSUER.
 */
export const deviceAuthorizationRoutes: FastifyPluginAsync = async (app) => {
  const { stores, clock, random } = app.protocol;
  const settings: DeviceAuthorizationSettings = {
    verificationUri: `${app.config.issuer}${ENDPOINTS.deviceVerification.path}`,
    deviceCodeTtl: app.config.device.deviceCodeTtl,
    pollInterval: app.config.device.pollInterval,
  };

  app.post(ENDPOINTS.deviceAuthorization.path, async (request, reply) => {
    // RFC 8707 §2: `resource` is the one parameter that may repeat.
    const { params, repeated } = readFormParameters(request.body, ['resource']);
    const { client } = await app.clientAuthentication.authenticate(request, 'device_authorization', params);
    const response = await authorizeDevice(
      { params, resources: repeated.resource ?? [], client },
      { stores, clock, random, settings },
    );
    return reply.send(response);
  });
};
