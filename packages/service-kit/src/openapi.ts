import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/** One route's entry in an app's description table (keyed `METHOD /path`, OpenAPI templates). */
export interface RouteDescription {
  summary: string;
  tag: string;
  /** Request parameters as the specification names them, for routes without a body schema. */
  parameters?: string[];
  /** Registered only when a feature is configured. */
  optional?: true;
}

export interface OpenApiOptions {
  title: string;
  description: string;
  serverUrl: string;
  tags: Array<{ name: string; description: string }>;
  routes: Readonly<Record<string, RouteDescription>>;
  /** Fastify URLs left out of the document (each with its reason, at the caller). */
  undocumentedUrls: readonly string[];
}

/**
 * The routes every service gets from this kit (health from the apps' lifecycle, the OpenAPI
 * document, metrics), under the `operations` tag: each app's table spreads these.
 */
export const OPERATIONS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  'GET /health/live': { summary: 'Liveness: the process answers', tag: 'operations' },
  'GET /health/ready': {
    summary: 'Readiness: database reachable and not draining (503 otherwise)',
    tag: 'operations',
  },
  'GET /openapi.json': { summary: 'This document (OpenAPI 3.1)', tag: 'operations' },
  'GET /metrics': {
    summary: 'Prometheus metrics: loopback without a token, elsewhere Bearer METRICS_TOKEN',
    tag: 'operations',
  },
};

/** The `operations` tag of OPERATIONS_ROUTE_DESCRIPTIONS. */
export const OPERATIONS_TAG = { name: 'operations', description: 'Health, metrics and this document' };

/** `/interaction/:id/login` → `/interaction/{id}/login`, as OpenAPI writes path parameters. */
export function openApiPath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Registers @fastify/swagger on `app` (call it before the routes: it collects them as they are
 * registered) and GET /openapi.json. Each route's summary and tag come from `routes`; TypeBox
 * schemas a route already has (body, querystring, response) describe its shapes. The table is
 * documentation only: it adds no validation. Both apps' tests check the table against the routes.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  const undocumented = new Set(options.undocumentedUrls);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // The document's own version (OpenAPI 3.1 §4.8.2), not the service's.
      info: { title: options.title, description: options.description, version: '1.0.0' },
      servers: [{ url: options.serverUrl }],
      tags: options.tags,
    },
    transform: ({ schema, url, route }) => {
      if (undocumented.has(url)) return { schema: { ...schema, hide: true }, url };
      const methods = ([] as string[]).concat(route.method);
      const method = methods.find((candidate) => candidate !== 'HEAD') ?? methods[0];
      const description = options.routes[`${method} ${openApiPath(url)}`];
      if (!description) return { schema, url };
      const parameters = description.parameters?.join(', ');
      return {
        schema: {
          ...schema,
          summary: description.summary,
          tags: [description.tag],
          ...(parameters ? { description: `Parameters: ${parameters}.` } : {}),
        },
        url,
      };
    },
  });
  app.get('/openapi.json', async () => app.swagger());
}
