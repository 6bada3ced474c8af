import { type Static, Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import {
  adminResponses,
  ClientOverview,
  ClientParams,
  ProviderOverview,
  ResourceOverview,
} from '../../schemas/admin-api.js';

/**
 * Clients, resources and upstream providers: read-only (the seed file is their truth; a change is
 * a pull request, its effect shown by `seed plan`), with the live counts only the server knows.
 */
export const registryRoutes: FastifyPluginAsync = async (app) => {
  const registry = app.admin.registry;

  app.get(
    ENDPOINTS.adminClients.path,
    { schema: { response: adminResponses(200, Type.Array(ClientOverview)) } },
    async () => registry.clients(),
  );
  app.get<{ Params: Static<typeof ClientParams> }>(
    ENDPOINTS.adminClient.path,
    { schema: { params: ClientParams, response: adminResponses(200, ClientOverview) } },
    async (request) => registry.client(request.params.clientId),
  );
  app.get(
    ENDPOINTS.adminResources.path,
    { schema: { response: adminResponses(200, Type.Array(ResourceOverview)) } },
    async () => registry.resources(),
  );
  app.get(
    ENDPOINTS.adminProviders.path,
    { schema: { response: adminResponses(200, Type.Array(ProviderOverview)) } },
    async () => registry.providers(),
  );
};
