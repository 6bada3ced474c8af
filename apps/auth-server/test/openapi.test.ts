/**
 * The OpenAPI document (GET /openapi.json) describes every route the server registers, and every
 * description names a real route: the route table is walked with Fastify's
 * onRoute hook, not read from printRoutes' drawing.
 */

import { defaultGrantHandlers } from '@oidc-orders/oauth-core';
import { openApiPath } from '@oidc-orders/service-kit';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_DESCRIPTIONS } from '../src/openapi/route-descriptions.js';
import { startTestApp, type TestApp } from './helpers/app.js';

/** Registered routes as `METHOD /path` (HEAD routes follow their GET; CORS preflight `*` is not an API). */
const registered = new Set<string>();
let app: TestApp;
let close: () => Promise<void>;
let document: {
  openapi: string;
  paths: Record<string, Record<string, { summary?: string; tags?: string[]; description?: string }>>;
};

beforeAll(async () => {
  ({ app, close } = await startTestApp({
    onRoute: (route: RouteOptions) => {
      if (route.url === '*') return;
      for (const method of ([] as string[]).concat(route.method)) {
        if (method !== 'HEAD') registered.add(`${method} ${openApiPath(route.url)}`);
      }
    },
  }));
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  document = response.json();
});
afterAll(() => close());

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(registered.size).toBeGreaterThan(30);
  });

  it('describes every registered route with a summary and a tag', () => {
    const missing = [...registered].filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      const operation = document.paths[path]?.[method.toLowerCase()];
      return !operation?.summary || operation.tags?.length !== 1;
    });
    expect(missing).toEqual([]);
  });

  it('describes no route that does not exist (Kerberos only when configured)', () => {
    const stale = Object.entries(ROUTE_DESCRIPTIONS)
      .filter(([route, description]) => !registered.has(route) && description.optional !== true)
      .map(([route]) => route);
    expect(stale).toEqual([]);
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.filter((route) => !registered.has(route))).toEqual([]);
  });

  it("lists the token endpoint's parameters of every registered grant", () => {
    const description = document.paths['/token']?.post?.description ?? '';
    const listed = description
      .replace(/^Parameters: /, '')
      .replace(/\.$/, '')
      .split(', ');
    const declared = defaultGrantHandlers.flatMap((grant) => grant.parameters);
    expect(listed[0]).toBe('grant_type');
    expect(new Set(listed)).toEqual(new Set(['grant_type', ...declared]));
    // Token exchange (RFC 8693 §2.1) and the device grant (RFC 8628 §3.4) are among them.
    expect(listed).toEqual(expect.arrayContaining(['subject_token', 'actor_token', 'device_code']));
  });

  it('names the protocol endpoints by their specifications', () => {
    expect(document.paths['/token']?.post?.summary).toContain('RFC 6749 §3.2');
    expect(document.paths['/introspect']?.post?.summary).toContain('RFC 7662');
    expect(document.paths['/.well-known/openid-configuration']?.get?.tags).toEqual(['openid']);
  });
});
