import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/** What Chromium sends when a person opens a URL. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

let database: TestDatabase;
let app: FastifyInstance;
let unconfigured: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  // A sign-in configuration whose issuer is never reached: the routes answer from config alone.
  app = await buildTestApp(database, {
    environment: {
      OIDC_ISSUER: 'http://127.0.0.1:9',
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: 'test-only-client-secret-0123456789',
      SESSION_SECRET: 'test-only-session-secret-0123456789abcdef',
    },
    deps: { discoveryRetry: { initialDelayMs: 60_000, maxDelayMs: 60_000 } },
  });
  unconfigured = await buildTestApp(database);
});
afterAll(async () => {
  await app?.close();
  await unconfigured?.close();
  await database?.dispose();
});

function expectOrdersPage(response: { headers: Record<string, unknown>; body: string }) {
  expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(String(response.headers['content-security-policy'])).toContain("default-src 'none'");
  expect(response.body).toContain('<link rel="stylesheet" href="/app/app.css">');
  expect(response.body).toContain('<link rel="icon" href="/app/favicon.svg"');
}

describe('browsers get pages, API clients JSON', () => {
  it('an unknown path: a 404 page in the /app style for a browser, JSON for a program', async () => {
    const page = await app.inject({ url: '/no-such-page', headers: { accept: BROWSER_ACCEPT } });
    expect(page.statusCode).toBe(404);
    expectOrdersPage(page);
    expect(page.body).toContain('href="/app"');

    const json = await app.inject({ url: '/no-such-page', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(404);
    expect(json.json()).toMatchObject({ statusCode: 404 });
  });

  it('GET /signin-oidc (a bookmarked callback) is a page, not JSON', async () => {
    const page = await app.inject({ url: '/signin-oidc', headers: { accept: BROWSER_ACCEPT } });
    expect(page.statusCode).toBe(404);
    expectOrdersPage(page);
  });

  it('/login with a foreign returnUrl: 400 page for a browser, JSON for a program', async () => {
    const url = '/login?returnUrl=https://evil.example/';
    const page = await app.inject({ url, headers: { accept: BROWSER_ACCEPT } });
    expect(page.statusCode).toBe(400);
    expectOrdersPage(page);
    expect(page.body).toContain('<details class="detail">');
    const json = await app.inject({ url, headers: { accept: '*/*' } });
    expect(json.statusCode).toBe(400);
    expect(json.json()).toMatchObject({ statusCode: 400 });
  });

  it('sign-in while the authorization server is unknown: a 503 page that links back to /app', async () => {
    for (const instance of [app, unconfigured]) {
      const page = await instance.inject({ url: '/login', headers: { accept: BROWSER_ACCEPT } });
      expect(page.statusCode).toBe(503);
      expectOrdersPage(page);
      expect(page.body).toContain('href="/app"');
    }
  });

  it('a callback without state: 400 page with a collapsible technical detail and a way on', async () => {
    const page = await app.inject({
      method: 'POST',
      url: '/signin-oidc',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: BROWSER_ACCEPT },
      payload: 'code=x',
    });
    expect(page.statusCode).toBe(400);
    expectOrdersPage(page);
    expect(page.body).toContain('<summary>Technical details</summary>');
    expect(page.body).toContain('href="/login?returnUrl=%2Fapp"');
    expect(page.body).toContain('href="/app"');
    expect(page.body).not.toContain('href="/"');
  });
});

describe('favicon and HSTS', () => {
  it('/favicon.ico and /app/favicon.svg answer with the icon, and /app links it', async () => {
    for (const url of ['/favicon.ico', '/app/favicon.svg']) {
      const icon = await app.inject({ url });
      expect(icon.statusCode).toBe(200);
      expect(icon.headers['content-type']).toBe('image/svg+xml');
    }
    expect((await app.inject({ url: '/app' })).body).toContain('<link rel="icon" href="/app/favicon.svg"');
  });

  it('no Strict-Transport-Security over plain HTTP (RFC 6797 §7.2), and it is sent over HTTPS', async () => {
    const plain = await app.inject({ url: '/app' });
    expect(plain.headers['strict-transport-security']).toBeUndefined();
    const behindTls = await buildTestApp(database, { environment: { TRUST_PROXY: 'true' } });
    try {
      const secure = await behindTls.inject({ url: '/app', headers: { 'x-forwarded-proto': 'https' } });
      expect(secure.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    } finally {
      await behindTls.close();
    }
  });
});

describe('one host name for pages and sign-in', () => {
  const environment = { BASE_URL: 'http://localhost:3000', API_KEY: 'test-only-api-key-0123456789' };

  it('in development a page on another host name redirects to BASE_URL before anything else', async () => {
    const dev = await buildTestApp(database, { environment: { ...environment, NODE_ENV: 'development' } });
    try {
      for (const url of ['/app', '/login?returnUrl=/app', '/']) {
        const response = await dev.inject({
          url,
          headers: { host: '127.0.0.1:3000', accept: BROWSER_ACCEPT },
        });
        expect(response.statusCode).toBe(307);
        expect(response.headers.location).toBe(`http://localhost:3000${url}`);
      }
      const same = await dev.inject({ url: '/app', headers: { host: 'localhost:3000' } });
      expect(same.statusCode).toBe(200);
      // Health probes and the API are addressed by instance address: never redirected.
      const health = await dev.inject({ url: '/health/live', headers: { host: '10.0.0.7:3000' } });
      expect(health.statusCode).toBe(200);
    } finally {
      await dev.close();
    }
  });

  it('in production it is refused with a page naming the right address (421)', async () => {
    const production = await buildTestApp(database, {
      environment: { ...environment, NODE_ENV: 'production' },
    });
    try {
      const response = await production.inject({
        url: '/app',
        headers: { host: '127.0.0.1:3000', accept: BROWSER_ACCEPT },
      });
      expect(response.statusCode).toBe(421);
      expectOrdersPage(response);
      expect(response.body).toContain('href="http://localhost:3000/app"');
    } finally {
      await production.close();
    }
  });
});
