import {
  ADMIN_API_SCOPES,
  adminApiResourceId,
  DPOP_SIGNING_ALGS,
  protectedResourceMetadata,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../endpoints.js';

/**
 * RFC 9728 §3: the administration API's Protected Resource Metadata, at the path §3.1 derives from
 * its identifier `<issuer>/admin/api`, so automation can learn from the resource alone which
 * authorization server issues its tokens and which scopes it knows. Public: it names no secret.
 */
export const adminApiMetadataRoutes: FastifyPluginAsync = async (app) => {
  const issuer = app.config.issuer;
  const document = protectedResourceMetadata({
    resource: adminApiResourceId(issuer),
    authorizationServers: [issuer],
    scopes: Object.values(ADMIN_API_SCOPES),
    dpopSigningAlgs: DPOP_SIGNING_ALGS,
  });
  app.get(ENDPOINTS.adminApiMetadata.path, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(document),
  );
};
