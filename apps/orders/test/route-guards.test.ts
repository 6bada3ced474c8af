import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/**
 * Routes that answer without credentials by design. Every other route must refuse a request that
 * carries none (401 or 403) before its handler runs: it sits in a guarded area
 * (src/routes/guarded-areas.ts, or the BFF's X-CSRF hook). Keep this list short.
 */
const PUBLIC_ROUTES = new Set([
  // Liveness and readiness probes for the orchestrator.
  'GET /health/live',
  'GET /health/ready',
  // The sign-in flow a person without a session goes through; each step checks its own state,
  // correlation cookie or CSRF token (src/routes/signin/).
  'GET /',
  'GET /login',
  'POST /signin-oidc',
  'GET /logout',
  'POST /logout',
  'GET /signed-out',
  // A redirect to the provider's account page (no data of this app).
  'GET /account',
  // Authenticated by the provider's signed logout token in the body (OIDC Back-Channel Logout 1.0 §2.6).
  'POST /backchannel-logout',
  // CORS preflights of the bearer API (src/plugins/api-cors.ts): headers only, no data.
  'OPTIONS /orders',
  'OPTIONS /orders/:id',
  // RFC 9728 protected resource metadata: public by definition (src/routes/protected-resource.ts).
  'GET /.well-known/oauth-protected-resource',
  // The OpenAPI document: describes the routes, holds no data (src/plugins/openapi.ts).
  'GET /openapi.json',
  // Guarded by its own check (loopback, else Bearer METRICS_TOKEN; test/metrics.test.ts), which
  // an injected request from 127.0.0.1 passes.
  'GET /metrics',
]);

/** The browser app's own files (src/routes/app.ts): public assets; its data comes through the BFF. */
const isPublicAsset = (route: string) => /^GET \/app(\/|$)/.test(route) || route === 'GET /favicon.ico';

interface Route {
  method: string;
  url: string;
}

/** Every route as Fastify registers it, through the app's `onRoute` seam (HEAD folded into GET). */
function routeCollector(): {
  routes: Route[];
  onRoute: (route: { method: string | string[]; url: string }) => void;
} {
  const routes: Route[] = [];
  return {
    routes,
    onRoute: ({ method, url }) => {
      for (const one of Array.isArray(method) ? method : [method]) {
        if (one !== 'HEAD') routes.push({ method: one, url });
      }
    },
  };
}

/**
 * 401 or 403 from the API-key or bearer area; the BFF area's hook refuses a request without
 * `X-CSRF: 1` (400 naming the header) before anything else, its handlers then require a session.
 */
function isRefusal(statusCode: number, body: string): boolean {
  return statusCode === 401 || statusCode === 403 || (statusCode === 400 && body.includes('X-CSRF: 1'));
}

/** The routes that answered a request without credentials with something other than a refusal. */
async function unguardedRoutes(app: FastifyInstance, routes: Route[]): Promise<string[]> {
  const unguarded: string[] = [];
  for (const { method, url } of routes) {
    const name = `${method} ${url}`;
    if (PUBLIC_ROUTES.has(name) || isPublicAsset(name)) continue;
    const concrete = url.replace(/:[A-Za-z]+/g, '1').replace(/\*$/, 'x');
    const response = await app.inject({ method: method as 'GET', url: concrete });
    if (!isRefusal(response.statusCode, response.body)) {
      unguarded.push(`${name} → ${response.statusCode}`);
    }
  }
  return unguarded;
}

/** Sign-in configured (so the BFF and sign-in areas are live); the issuer is never reached. */
const SIGN_IN_ENVIRONMENT = {
  OIDC_ISSUER: 'http://127.0.0.1:9',
  OIDC_CLIENT_ID: 'orders-web',
  OIDC_CLIENT_SECRET: 'test-only-client-secret-0123456789',
  SESSION_SECRET: 'test-only-session-secret-0123456789abcdef',
};
const NO_DISCOVERY_RETRY = { initialDelayMs: 60_000, maxDelayMs: 60_000 };

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.dispose();
});

describe('guards by area', () => {
  it('every route is either on the public list or refuses a request without credentials', async () => {
    const { routes, onRoute } = routeCollector();
    const app = await buildApp(testConfig(SIGN_IN_ENVIRONMENT), {
      database: database.handle,
      discoveryRetry: NO_DISCOVERY_RETRY,
      onRoute,
    });
    await app.ready();
    try {
      expect(routes.map(({ method, url }) => `${method} ${url}`)).toEqual(
        expect.arrayContaining([
          'POST /orders',
          'GET /orders',
          'GET /orders/:id',
          'GET /users',
          'POST /users',
        ]),
      );
      expect(await unguardedRoutes(app, routes)).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('a route added outside the guarded areas is reported', async () => {
    const { routes, onRoute } = routeCollector();
    const app = await buildApp(testConfig(SIGN_IN_ENVIRONMENT), {
      database: database.handle,
      discoveryRetry: NO_DISCOVERY_RETRY,
      onRoute,
    });
    app.register(async (outside) => {
      outside.get('/orders-export', async () => []);
    });
    await app.ready();
    try {
      expect(await unguardedRoutes(app, routes)).toEqual(['GET /orders-export → 200']);
    } finally {
      await app.close();
    }
  });
});
