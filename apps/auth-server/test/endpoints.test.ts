/**
 * The table of protocol endpoints (src/endpoints.ts) held against the running app: every row is a
 * registered route and, where it has a metadata name, a discovery entry; every CORS row answers a
 * preflight and no other path does; every route that authenticates clients, or that answers in
 * the OAuth error styles, has its row and lives in the oauth area (src/routes/oauth/). A row
 * removed, or a route added without one, fails here.
 */

import type { RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { BROWSER_CORS_ENDPOINTS, clientAuthenticationEndpointUrls, ENDPOINTS } from '../src/endpoints.js';
import { FORM, form, TEST_ISSUER, useAppWithRoutes } from './helpers/app.js';
import { SPA_ORIGIN } from './helpers/seed.js';

const rows = Object.values(ENDPOINTS);
const { routes, app: testApp } = useAppWithRoutes();

const methodsOf = (route: RouteOptions) => ([] as string[]).concat(route.method);
const routesAt = (path: string) => routes.filter((route) => route.url === path);
/** Routes in the OAuth error styles: RFC 6749 §5.2 JSON or the RFC 6750 §3 challenge. */
const oauthStyled = () => routes.filter((route) => route.config?.errorStyle !== undefined);

/** POSTs an unknown client's form: an endpoint that authenticates clients answers invalid_client. */
async function authenticatesClients(path: string): Promise<boolean> {
  const response = await testApp().inject({
    method: 'POST',
    url: path,
    headers: FORM,
    payload: form({
      client_id: 'no-such-client',
      client_secret: 'x',
      grant_type: 'client_credentials',
      token: 'x',
    }),
  });
  if (!String(response.headers['content-type']).startsWith('application/json')) return false;
  return response.json().error === 'invalid_client';
}

describe('the endpoint table against the app', () => {
  it('has a registered route for every row', () => {
    const missing = rows.filter((row) => routesAt(row.path).length === 0).map((row) => row.path);
    expect(missing).toEqual([]);
  });

  it('lists every row with a metadata name in discovery, at the issuer', async () => {
    const metadata = (
      await testApp().inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    ).json();
    for (const row of rows) {
      if ('metadata' in row) expect(metadata[row.metadata], row.metadata).toBe(`${TEST_ISSUER}${row.path}`);
    }
    const listed = Object.keys(metadata).filter((name) => /_endpoint$|^jwks_uri$/.test(name));
    expect(listed.sort()).toEqual(rows.flatMap((row) => ('metadata' in row ? [row.metadata] : [])).sort());
  });

  it('answers a CORS preflight on every browserCors row, and has no other preflight route', async () => {
    for (const row of BROWSER_CORS_ENDPOINTS) {
      const response = await testApp().inject({
        method: 'OPTIONS',
        url: row.path,
        headers: { origin: SPA_ORIGIN, 'access-control-request-method': 'POST' },
      });
      expect(response.statusCode, row.path).toBe(204);
      expect(response.headers['access-control-allow-origin'], row.path).toBe(SPA_ORIGIN);
    }
    const withCors = routes.filter((route) =>
      ([] as unknown[]).concat(route.onRequest).includes(testApp().browserCors),
    );
    expect([...new Set(withCors.map((route) => route.url))].sort()).toEqual(
      BROWSER_CORS_ENDPOINTS.map((row) => row.path).sort(),
    );
    const preflights = routes.filter((route) => methodsOf(route).includes('OPTIONS') && route.url !== '*');
    expect(preflights.map((route) => route.url).sort()).toEqual(
      BROWSER_CORS_ENDPOINTS.map((row) => row.path).sort(),
    );
  });

  it('has a clientAuthentication row for every route that authenticates clients', async () => {
    const posts = [
      ...new Set(routes.filter((route) => methodsOf(route).includes('POST')).map((route) => route.url)),
    ];
    const authenticating: string[] = [];
    for (const path of posts.filter((url) => !url.includes(':'))) {
      if (await authenticatesClients(path)) authenticating.push(path);
    }
    const declared = Object.values(clientAuthenticationEndpointUrls(''));
    expect(authenticating.sort()).toEqual(declared.sort());
  });

  it('keeps every OAuth-styled route in the oauth area, each with its row', () => {
    const oauthRows: string[] = rows.filter((row) => row.area === 'oauth').map((row) => row.path);
    const outside = oauthStyled().filter((route) => route.config?.area !== 'oauth');
    expect(outside.map((route) => `${methodsOf(route)} ${route.url}`)).toEqual([]);
    const withoutRow = oauthStyled().filter((route) => !oauthRows.includes(route.url));
    expect(withoutRow.map((route) => `${methodsOf(route)} ${route.url}`)).toEqual([]);
    expect([...new Set(oauthStyled().map((route) => route.url))].sort()).toEqual([...oauthRows].sort());
  });
});
