/**
 * The interaction area (src/routes/interaction/) lets no page through unguarded: every route
 * under /interaction/:id declares its guard, every form (POST) names its CSRF purpose, and the
 * guard answers before any handler for an interaction that this browser did not start. Walks the
 * routes as registered, so a page added without the guard config fails here.
 */

import type { RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { FORM, useAppWithRoutes } from './helpers/app.js';

const { routes, app: testApp } = useAppWithRoutes();

const areaRoutes = () => routes.filter((route) => route.url.startsWith('/interaction/'));
const methodsOf = (route: RouteOptions) => ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');

describe('the interaction area', () => {
  it('has a guard on every page, and a CSRF purpose on every form', () => {
    expect(areaRoutes().length).toBeGreaterThan(10);
    const unguarded = areaRoutes().filter((route) => route.config?.interaction === undefined);
    expect(unguarded.map((route) => `${methodsOf(route)} ${route.url}`)).toEqual([]);
    const formsWithoutCsrf = areaRoutes().filter(
      (route) => methodsOf(route).includes('POST') && route.config?.interaction?.csrf === undefined,
    );
    expect(formsWithoutCsrf.map((route) => route.url)).toEqual([]);
  });

  it('answers an unknown interaction before any handler, on every page', async () => {
    for (const route of areaRoutes()) {
      for (const method of methodsOf(route)) {
        const response = await testApp().inject({
          method: method as 'GET' | 'POST',
          url: route.url.replace(':id', 'no-such-interaction'),
          ...(method === 'POST' ? { headers: FORM, payload: 'csrf=x' } : {}),
        });
        expect(response.statusCode, `${method} ${route.url}`).toBe(400);
        expect(response.body, `${method} ${route.url}`).toContain('expired');
      }
    }
  });
});
