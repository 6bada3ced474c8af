import { OPERATIONS_TAG, registerOpenApi } from '@oidc-orders/service-kit';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { ROUTE_DESCRIPTIONS } from '../openapi/route-descriptions.js';

/**
 * GET /openapi.json: the OpenAPI 3.1 description of every route, named from ROUTE_DESCRIPTIONS
 * (register before the routes). Documentation only: requests are still checked by the protocol
 * code, whose errors are RFC 6749 bodies, not schema errors.
 */
export const openApiPlugin: FastifyPluginAsync = fp(
  async (app) => {
    await registerOpenApi(app, {
      title: 'oidc-orders authorization server',
      description:
        'OAuth 2.0 / OpenID Connect authorization server. Protocol endpoints follow their RFCs; discovery (/.well-known/openid-configuration) is the authoritative list of what is supported.',
      serverUrl: app.config.issuer,
      tags: [
        { name: 'oauth', description: 'OAuth 2.0 endpoints' },
        { name: 'openid', description: 'OpenID Connect endpoints' },
        { name: 'pages', description: 'HTML pages a person sees' },
        { name: 'account', description: "The signed-in user's account page" },
        { name: 'console', description: "The operator console's pages (/admin), for the seed's admins" },
        {
          name: 'admin',
          description:
            'Administration API: access tokens for the resource <issuer>/admin/api with admin.read (reads) or admin.write (changes); errors are RFC 9457 problem details',
        },
        OPERATIONS_TAG,
      ],
      routes: ROUTE_DESCRIPTIONS,
      undocumentedUrls: [],
    });
  },
  { name: 'openapi', dependencies: ['config'] },
);
