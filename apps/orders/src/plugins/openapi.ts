import { OPERATIONS_TAG, registerOpenApi } from '@oidc-orders/service-kit';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { ROUTE_DESCRIPTIONS } from '../openapi/route-descriptions.js';

/**
 * GET /openapi.json: the OpenAPI 3.1 description of every route, its shapes from the routes'
 * TypeBox schemas and its names from ROUTE_DESCRIPTIONS. Registered before the routes (it collects
 * them as they are registered). Public: it describes, it holds nothing secret.
 */
export const openApiPlugin: FastifyPluginAsync = fp(
  async (app) => {
    await registerOpenApi(app, {
      title: 'oidc-orders orders service',
      description:
        'Orders API (x-api-key for back-office tools, OAuth 2.0 access tokens for users), the browser sign-in (OpenID Connect) and the backend-for-frontend used by the web app.',
      serverUrl: app.config.baseUrl,
      tags: [
        { name: 'orders', description: 'Orders API' },
        { name: 'users', description: 'Users API (x-api-key)' },
        { name: 'bff', description: 'Backend for frontend: the web app, through its session cookie' },
        { name: 'sign-in', description: 'OpenID Connect sign-in and sign-out' },
        { name: 'pages', description: 'The web app' },
        OPERATIONS_TAG,
      ],
      routes: ROUTE_DESCRIPTIONS,
      undocumentedUrls: [],
    });
  },
  { name: 'openapi', dependencies: ['config'] },
);
