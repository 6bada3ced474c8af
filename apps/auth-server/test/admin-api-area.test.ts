import type { RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../src/endpoints.js';
import { parseSeedDocument } from '../src/seed.js';
import { TEST_ISSUER, useAppWithRoutes } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

/**
 * The admin API is one guarded area (src/routes/admin-api/): every `admin-api` row of the endpoint
 * table has its routes, every route under /admin/api is in the area, and none answers without an
 * access token. A route added outside the area, or a row without a route, fails here. The seed
 * cannot hand the built-in resource's scopes to anything but a seed client.
 */

const { routes, app } = useAppWithRoutes();
const adminRows = Object.values(ENDPOINTS).filter((row) => row.area === 'admin-api');
const adminRoutes = () => routes.filter((route) => route.url.startsWith('/admin/api/'));
const methodsOf = (route: RouteOptions) => ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');
/** A concrete URL for a route's path template. */
const concrete = (url: string) => url.replace(/:[A-Za-z]+/g, 'x');

describe('the admin API area', () => {
  it('has routes for every admin-api row and no route under /admin/api outside the table', () => {
    const paths = new Set(adminRoutes().map((route) => route.url));
    expect(adminRows.map((row) => row.path).filter((path) => !paths.has(path))).toEqual([]);
    const rowPaths: string[] = adminRows.map((row) => row.path);
    expect([...paths].filter((path) => !rowPaths.includes(path))).toEqual([]);
  });

  it('puts every route under /admin/api in the guarded area', () => {
    const outside = adminRoutes().filter((route) => route.config?.adminApi !== true);
    expect(outside.map((route) => `${methodsOf(route)} ${route.url}`)).toEqual([]);
  });

  it('answers every route without a token 401 with a challenge, as problem details', async () => {
    for (const route of adminRoutes()) {
      for (const method of methodsOf(route)) {
        const response = await app().inject({ method: method as 'GET', url: concrete(route.url) });
        expect(response.statusCode, `${method} ${route.url}`).toBe(401);
        expect(response.headers['content-type'], route.url).toMatch(/^application\/problem\+json/);
        expect(response.headers['www-authenticate'], route.url).toMatch(/^Bearer realm="admin-api"/);
        expect(response.headers['cache-control'], route.url).toBe('no-store');
      }
    }
  });
});

describe('the admin API as a protected resource (RFC 9728)', () => {
  it('publishes its metadata at the path derived from its identifier, without a token', async () => {
    const response = await app().inject({
      method: 'GET',
      url: '/.well-known/oauth-protected-resource/admin/api',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      resource: `${TEST_ISSUER}/admin/api`,
      authorization_servers: [TEST_ISSUER],
      scopes_supported: ['admin.read', 'admin.write'],
      bearer_methods_supported: ['header'],
    });
  });
});

describe('the seed and the admin scopes', () => {
  it('refuses a seed resource claiming an admin scope', () => {
    const seed = testSeed();
    seed.resources = [
      ...(seed.resources ?? []),
      { id: 'https://api.example.test/ops', scopes: ['admin.read'] },
    ];
    expect(() => parseSeedDocument(seed)).toThrow(/admin\.read.*built-in administration API/);
  });

  it('refuses admin scopes in the policy of dynamic registration', () => {
    const seed = { ...testSeed(), client_registration: { open: true, scope: 'openid admin.write' } };
    expect(() => parseSeedDocument(seed)).toThrow(/client_registration\.scope: admin\.write/);
  });

  it('lets a seed client list them in its own scope', () => {
    const seed = testSeed();
    seed.clients = [
      ...(seed.clients ?? []),
      {
        client_id: 'ops',
        client_secret: 'x'.repeat(32),
        grant_types: ['client_credentials'],
        scope: 'admin.read',
      },
    ];
    expect(parseSeedDocument(seed).clients?.at(-1)?.scope).toBe('admin.read');
  });
});
