import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  DPOP_SIGNING_ALGS,
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
} from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import { protectedResourceMetadataSchema } from '../schemas/protected-resource.js';
import { ORDERS_READ_SCOPE, ORDERS_WRITE_SCOPE } from './orders.js';

/**
 * RFC 9728 Protected Resource Metadata, published when RESOURCE_ID is an absolute http(s) URL and
 * OIDC_ISSUER is set (`config.resourceMetadataUrl`). Served at the path RFC 9728 §3.1 derives from
 * RESOURCE_ID and, when that has a path of its own, also at the bare well-known path, which is
 * where a client that only knows this host looks first (MCP authorization, "Protected Resource
 * Metadata Discovery").
 */
const registerProtectedResourceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { resourceMetadataUrl, resourceId, oidc } = app.config;
  if (resourceMetadataUrl === undefined || oidc.issuer === undefined) return;
  const document = protectedResourceMetadata({
    resource: resourceId,
    authorizationServers: [oidc.issuer],
    // `email`: the API finds the caller's orders by the e-mail its token carries, and the
    // authorization server puts that claim in access tokens only when the scope was granted. A
    // client asking for what this list names (the MCP SDK does) thus gets a token the API can use.
    scopes: [ORDERS_READ_SCOPE, ORDERS_WRITE_SCOPE, 'email'],
    dpopSigningAlgs: DPOP_SIGNING_ALGS,
  });
  const paths = new Set([PROTECTED_RESOURCE_WELL_KNOWN, new URL(resourceMetadataUrl).pathname]);
  for (const url of paths) {
    app.get(url, { schema: protectedResourceMetadataSchema }, async (_request, reply) => {
      // Public metadata, read by browser-based clients of other origins too.
      return reply.header('access-control-allow-origin', '*').send(document);
    });
  }
};

export const protectedResourceRoutes = fp(registerProtectedResourceRoutes, {
  name: 'protected-resource-routes',
  dependencies: ['config', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
