import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { adminResponses, KeyRotation, SigningKeyStatus } from '../../schemas/admin-api.js';
import { adminActor } from './admin-token.js';

/** The signing keys' state (public parts only) and their rotation, as `keys list` and `keys rotate`. */
export const signingKeyRoutes: FastifyPluginAsync = async (app) => {
  const keys = app.admin.keys;

  app.get(
    ENDPOINTS.adminKeys.path,
    { schema: { response: adminResponses(200, Type.Array(SigningKeyStatus)) } },
    async () => keys.status(),
  );
  app.post(
    ENDPOINTS.adminKeysRotate.path,
    { schema: { response: adminResponses(200, KeyRotation) } },
    async (request) => keys.rotate(adminActor(request)),
  );
};
