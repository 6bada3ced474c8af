/**
 * The account area (src/routes/account/) lets no route through unguarded: every route under
 * /account declares its guard (`signed-in`, `change` or `recent-change`), and the guard answers
 * before any handler when the browser is not signed in. Walks the routes as registered, so a
 * route added without the guard config fails here.
 */

import type { RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { FORM, useAppWithRoutes } from './helpers/app.js';

const { routes, app: testApp } = useAppWithRoutes();

const accountRoutes = () =>
  routes.filter((route) => route.url === '/account' || route.url.startsWith('/account/'));
const methodsOf = (route: RouteOptions) => ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');
/** A concrete URL for a route template (`:id` filled in). */
const concrete = (url: string) => url.replace(/:\w+/g, 'x');

describe('the account area', () => {
  it('has a guard on every route', () => {
    expect(accountRoutes().length).toBeGreaterThan(10);
    const unguarded = accountRoutes().filter((route) => route.config?.account === undefined);
    expect(unguarded.map((route) => `${methodsOf(route)} ${route.url}`)).toEqual([]);
  });

  it('asks for a sign-in on every route, and the changes are POSTs', async () => {
    for (const route of accountRoutes()) {
      for (const method of methodsOf(route)) {
        if (route.config?.account !== 'signed-in') expect(method, route.url).toBe('POST');
        const response = await testApp().inject({
          method: method as 'GET' | 'POST',
          url: concrete(route.url),
          ...(method === 'POST' ? { headers: FORM, payload: 'csrf=x' } : {}),
        });
        expect(response.statusCode, `${method} ${route.url}`).toBe(303);
        expect(response.headers.location, `${method} ${route.url}`).toMatch(/\/interaction\/[^/]+\/login/);
      }
    }
  });
});
