import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { mcpRoute } from './mcp.js';
import {
  ORDERS_READ_SCOPE,
  type OrderRoutesOptions,
  orderByIdRoute,
  ownOrdersRoute,
  placeOrderRoute,
} from './orders.js';
import { userRoutes } from './users.js';

/**
 * Guards by area, not by route (fastify/demo's `autohooks`): each area is an
 * encapsulated plugin with exactly one onRequest guard, so a route added to an area is protected
 * by default and no route carries a guard of its own. The guard runs before the body is parsed:
 * a wrong key or token is refused whatever the body is. test/route-guards.test.ts walks every
 * route of the app and fails on one that is neither in an area nor on its list of public routes.
 */
const registerGuardedRoutes: FastifyPluginAsyncTypebox<OrderRoutesOptions> = async (app, options) => {
  // Back-office tools: `x-api-key` (missing → 401, wrong or repeated → 403).
  await app.register(async (area) => {
    area.addHook('onRequest', app.requireApiKey);
    await area.register(userRoutes);
    await area.register(placeOrderRoute, options);
  });

  // The resource server: an access token for RESOURCE_ID with `orders.read` (RFC 6750, RFC 9449).
  await app.register(async (area) => {
    area.addHook('onRequest', app.apiCors);
    area.addHook('onRequest', app.requireBearer(ORDERS_READ_SCOPE));
    await area.register(ownOrdersRoute);
  });

  // The MCP server: any access token for RESOURCE_ID; each tool checks its own scope (src/routes/mcp.ts).
  await app.register(async (area) => {
    area.addHook('onRequest', app.requireBearer());
    await area.register(mcpRoute);
  });

  // Both callers at once: back-office tools with the API key, users with a bearer token.
  await app.register(async (area) => {
    area.addHook('onRequest', app.apiCors);
    area.addHook('onRequest', requireApiKeyOrBearer(app.requireApiKey, app.requireBearer(ORDERS_READ_SCOPE)));
    await area.register(orderByIdRoute);
  });
};

/**
 * An `x-api-key` header always means the API-key path, so a wrong key is 403 as before; a request
 * with only `Authorization` takes the bearer path; no credentials at all is the API key's 401.
 */
function requireApiKeyOrBearer(
  requireApiKey: onRequestAsyncHookHandler,
  requireBearer: onRequestAsyncHookHandler,
): onRequestAsyncHookHandler {
  return async function (request, reply) {
    if (request.headers['x-api-key'] === undefined && request.headers.authorization !== undefined) {
      return requireBearer.call(this, request, reply);
    }
    return requireApiKey.call(this, request, reply);
  };
}

export const guardedRoutes = fp(registerGuardedRoutes, {
  name: 'guarded-routes',
  dependencies: ['config', 'db', 'api-key-guard', 'bearer-auth', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
