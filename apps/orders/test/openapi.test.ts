/**
 * The OpenAPI document (GET /openapi.json) describes every route the service registers, with the
 * shapes of its TypeBox schemas, and every description names a real route. The
 * routes are collected with Fastify's onRoute hook as they are registered.
 */
import { openApiPath } from '@oidc-orders/service-kit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { ROUTE_DESCRIPTIONS } from '../src/openapi/route-descriptions.js';
import { testConfig } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

type Operation = {
  summary?: string;
  tags?: string[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
};

const registered = new Set<string>();
let database: TestDatabase;
let app: FastifyInstance;
let document: { openapi: string; paths: Record<string, Record<string, Operation>> };

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildApp(
    testConfig({
      // Sign-in configured, so its routes and the BFF's exist; the issuer is never reached.
      OIDC_ISSUER: 'http://127.0.0.1:9',
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: 'test-only-client-secret-0123456789',
      SESSION_SECRET: 'test-only-session-secret-0123456789abcdef',
      // An http(s) URL, so the RFC 9728 metadata route exists too.
      RESOURCE_ID: 'http://localhost:3000',
    }),
    {
      database: database.handle,
      discoveryRetry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
      onRoute: (route) => {
        if (route.url === '*') return; // CORS preflight for every path, not an API of its own.
        for (const method of ([] as string[]).concat(route.method)) {
          if (method !== 'HEAD') registered.add(`${method} ${openApiPath(route.url)}`);
        }
      },
    },
  );
  await app.ready();
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json();
});
afterAll(async () => {
  await app?.close();
  await database?.dispose();
});

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document covering the API, the BFF and the sign-in routes', () => {
    expect(document.openapi).toBe('3.1.0');
    expect([...registered]).toEqual(
      expect.arrayContaining(['POST /orders', 'GET /orders/{id}', 'GET /bff/orders', 'POST /signin-oidc']),
    );
  });

  it('describes every registered route with a summary and a tag', () => {
    const missing = [...registered].filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      const operation = document.paths[path]?.[method.toLowerCase()];
      return !operation?.summary || operation.tags?.length !== 1;
    });
    expect(missing).toEqual([]);
  });

  it('describes no route that does not exist', () => {
    expect(Object.keys(ROUTE_DESCRIPTIONS).filter((route) => !registered.has(route))).toEqual([]);
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.filter((route) => !registered.has(route))).toEqual([]);
  });

  it("carries the request body's TypeBox schema (POST /orders)", () => {
    const body = document.paths['/orders']?.post?.requestBody?.content['application/json']?.schema;
    expect(Object.keys(body?.properties ?? {}).sort()).toEqual(['email', 'quantity']);
  });
});
