/**
 * The oauth area (src/routes/oauth/) guards every route it holds: a POST whose body is not a form
 * is refused with RFC 6749 §5.2 `invalid_request` before any handler runs, and every answer,
 * success or error, carries `cache-control: no-store` (RFC 6749 §5.1). Only POST /userinfo may
 * take no body (OIDC Core §5.3.1 with the token in the header), and only the RFC 7591 registration
 * endpoint takes JSON. Walks the routes as registered,
 * so a route that slips the area's hook fails here.
 */

import formbody from '@fastify/formbody';
import Fastify, { type RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../src/endpoints.js';
import { errorHandlerPlugin } from '../src/plugins/error-handler.js';
import { guardOAuthArea } from '../src/routes/oauth/index.js';
import { FORM, useAppWithRoutes } from './helpers/app.js';

const { routes, app: testApp } = useAppWithRoutes();

const areaRoutes = () => routes.filter((route) => route.config?.area === 'oauth');
const methodsOf = (route: RouteOptions) => ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');

describe('the oauth area', () => {
  it('holds the back-channel endpoints', () => {
    // Six, and the two of dynamic client registration (on in this app's seed).
    expect(new Set(areaRoutes().map((route) => route.url)).size).toBe(8);
  });

  it('refuses a JSON body on every POST route but registration, as an uncached OAuth error', async () => {
    const formRoutes = areaRoutes().filter(
      (r) => methodsOf(r).includes('POST') && r.config?.formBody !== 'json',
    );
    for (const route of formRoutes) {
      const response = await testApp().inject({
        method: 'POST',
        url: route.url,
        headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
        payload: '{"token":"x"}',
      });
      expect(response.statusCode, route.url).toBe(400);
      expect(response.json().error, route.url).toBe('invalid_request');
      expect(response.headers['cache-control'], route.url).toBe('no-store');
    }
  });

  it('answers every route uncached, whatever the outcome', async () => {
    for (const route of areaRoutes()) {
      for (const method of methodsOf(route)) {
        const response = await testApp().inject({ method: method as 'GET' | 'POST', url: route.url });
        expect(response.headers['cache-control'], `${method} ${route.url}`).toBe('no-store');
        expect(response.headers.pragma, `${method} ${route.url}`).toBe('no-cache');
      }
    }
  });

  it('lets only POST /userinfo go without a body', () => {
    const optional = areaRoutes().filter((route) => route.config?.formBody === 'when-present');
    expect([...new Set(optional.map((route) => route.url))]).toEqual([ENDPOINTS.userinfo.path]);
  });

  it('takes JSON at the registration endpoints only (RFC 7591 §3.1, RFC 7592 §2.2)', () => {
    const json = areaRoutes().filter((route) => route.config?.formBody === 'json');
    expect([...new Set(json.map((route) => route.url))].sort()).toEqual(
      [ENDPOINTS.registration.path, ENDPOINTS.registrationManagement.path].sort(),
    );
  });
});

describe('a route added to the oauth area', () => {
  it('gets the form check, the OAuth error style and no-store without declaring them', async () => {
    const bare = Fastify();
    await bare.register(errorHandlerPlugin);
    await bare.register(formbody);
    await bare.register(async (area) => {
      guardOAuthArea(area);
      area.post('/fixture', async () => ({ issued: true }));
    });
    const ok = await bare.inject({ method: 'POST', url: '/fixture', headers: FORM, payload: 'a=b' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    const json = await bare.inject({ method: 'POST', url: '/fixture', payload: { a: 'b' } });
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toBe('invalid_request');
    expect(json.headers['cache-control']).toBe('no-store');
    await bare.close();
  });
});
