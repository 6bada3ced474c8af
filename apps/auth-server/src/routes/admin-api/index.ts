import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import { NO_STORE_HEADERS } from '../../plugins/error-handler.js';
import { createAdminTokenCheck } from './admin-token.js';
import { auditRoutes } from './audit.js';
import { sendProblem } from './problem-details.js';
import { registryRoutes } from './registry.js';
import { type SeedPlanRouteOptions, seedPlanRoutes } from './seed-plan.js';
import { sessionRoutes } from './sessions.js';
import { signingKeyRoutes } from './signing-keys.js';
import { userRoutes } from './users.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every route of src/routes/admin-api/ by the area (test/admin-api-area.test.ts walks it). */
    adminApi?: true;
  }
}

/**
 * The administration API (`/admin/api/…`, the `admin-api` rows of src/endpoints.ts): one
 * encapsulated plugin whose single `onRequest` guard checks the access token of every route in it
 * (a route added here is protected by default, with the scope its method needs), whose answers are
 * never cached, and whose errors are RFC 9457 problem details.
 */
export const adminApiRoutes: FastifyPluginAsync<SeedPlanRouteOptions> = async (app, options) => {
  const checkAdminToken = createAdminTokenCheck(app);
  app.decorateRequest('adminToken', null);
  app.addHook('onRoute', (route: RouteOptions) => {
    route.config = { ...route.config, adminApi: true };
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.headers(NO_STORE_HEADERS);
    request.adminToken = await checkAdminToken(request);
  });
  app.setErrorHandler((error, request, reply) => sendProblem(error, request, reply));
  await app.register(userRoutes);
  await app.register(sessionRoutes);
  await app.register(registryRoutes);
  await app.register(signingKeyRoutes);
  await app.register(auditRoutes);
  await app.register(seedPlanRoutes, options);
};
