import { DESIGN_TOKENS_CSS } from '@oidc-orders/service-kit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, withApiKey } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

const SPA_ORIGIN = 'http://localhost:5173';

let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database, { environment: { ALLOWED_CORS_ORIGINS: SPA_ORIGIN } });
});
afterAll(async () => {
  await app?.close();
  await database?.dispose();
});

describe('the orders single-page app at /app', () => {
  it.each(['/app', '/app/'])('serves the page at %s with a strict CSP', async (url) => {
    const response = await app.inject({ method: 'GET', url });

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.body).toContain('<script type="module" src="/app/app.js"></script>');
  });

  it('has no inline script, no inline style and no event-handler attributes', async () => {
    const { body } = await app.inject({ method: 'GET', url: '/app' });

    // Every <script> has a src; there is no <style> element, style attribute or on* handler.
    expect(body.match(/<script\b[^>]*>/g)?.every((tag) => / src="/.test(tag))).toBe(true);
    expect(body).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it.each([
    ['/app/app.js', 'text/javascript; charset=utf-8'],
    ['/app/app.css', 'text/css; charset=utf-8'],
  ])('serves %s as %s', async (url, type) => {
    const response = await app.inject({ method: 'GET', url });

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(type);
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.body.length).toBeGreaterThan(100);
  });

  it('calls the BFF with X-CSRF and never reads cookies or storage', async () => {
    const { body } = await app.inject({ method: 'GET', url: '/app/app.js' });

    expect(body).toContain("'X-CSRF': '1'");
    expect(body).not.toMatch(/document\.cookie|localStorage|sessionStorage|indexedDB/);
  });

  it("serves the shared design tokens first, then the app's own rules", async () => {
    const { body } = await app.inject({ method: 'GET', url: '/app/app.css' });
    expect(body.startsWith(DESIGN_TOKENS_CSS)).toBe(true);
    const own = body.slice(DESIGN_TOKENS_CSS.length);
    expect(own).toContain('.topbar');
    expect(own).not.toContain('--danger-text:');
  });

  it('keeps its CSP and framing headers off the JSON API', async () => {
    const response = await app.inject({ method: 'GET', url: '/health/live' });

    expect(response.headers['content-security-policy']).toBeUndefined();
    expect(response.headers['x-frame-options']).toBeUndefined();
  });

  it('answers 404 for files that are not part of the app', async () => {
    const response = await app.inject({ method: 'GET', url: '/app/../src/config.ts' });

    expect(response.statusCode).toBe(404);
  });
});

describe('CORS (ALLOWED_CORS_ORIGINS) for the bearer API only', () => {
  const preflight = (url: string, origin: string, method = 'GET') =>
    app.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization',
      },
    });

  it.each(['/orders', '/orders/1'])('grants a preflight for GET %s to an allowed origin', async (url) => {
    const response = await preflight(url, SPA_ORIGIN);

    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(SPA_ORIGIN);
    expect(response.headers['access-control-allow-methods']).toBe('GET');
    expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toBe('authorization');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('exposes the bearer challenge on the API response itself', async () => {
    const response = await app.inject({ method: 'GET', url: '/orders', headers: { origin: SPA_ORIGIN } });

    expect(response.headers['access-control-allow-origin']).toBe(SPA_ORIGIN);
    expect(response.headers['access-control-expose-headers']).toBe('WWW-Authenticate');
  });

  it('refuses other origins', async () => {
    for (const origin of ['http://localhost:5174', 'https://evil.example', 'null']) {
      const response = await preflight('/orders', origin);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.statusCode).toBe(404);
    }
  });

  it('is never offered on the BFF, the API-key routes or other methods, even to an allowed origin', async () => {
    for (const url of ['/bff/orders', '/bff/user', '/users', '/', '/app']) {
      const response = await preflight(url, SPA_ORIGIN);
      expect(response.headers['access-control-allow-origin'], url).toBeUndefined();
    }
    const post = await preflight('/orders', SPA_ORIGIN, 'POST');
    expect(post.headers['access-control-allow-origin']).toBeUndefined();

    const placed = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { ...withApiKey, origin: SPA_ORIGIN },
      payload: { email: 'cors@example.com', quantity: 1 },
    });
    expect(placed.statusCode).toBe(201);
    expect(placed.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('runs only in the bearer areas: other routes do no CORS work and carry no Vary: Origin', async () => {
    for (const url of ['/health/live', '/users', '/bff/user']) {
      const response = await app.inject({ method: 'GET', url, headers: { origin: SPA_ORIGIN } });
      expect(response.headers.vary ?? '', url).not.toMatch(/Origin/i);
      expect(response.headers['access-control-allow-origin'], url).toBeUndefined();
    }
    const api = await app.inject({ method: 'GET', url: '/orders/1', headers: withApiKey });
    expect(api.headers.vary).toMatch(/Origin/i);
  });
});
