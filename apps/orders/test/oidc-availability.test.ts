import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, withApiKey } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import {
  FAKE_CLIENT_ID,
  FAKE_CLIENT_SECRET,
  type FakeIssuer,
  startFakeIssuer,
} from './helpers/fake-issuer.js';
import { findFreePort } from './helpers/server-process.js';

/**
 * The API-only use keeps working without an authorization server: with no OIDC_ISSUER the sign-in,
 * BFF and bearer routes answer 503 naming what to configure; with an unreachable one the app still
 * starts, retries discovery in the background and reports it in readiness.
 */

let database: TestDatabase;
let app: FastifyInstance | undefined;
let issuer: FakeIssuer | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  await issuer?.close();
  issuer = undefined;
});
afterAll(async () => {
  await database?.dispose();
});

describe('without OIDC_ISSUER', () => {
  it('the API-key routes and health work; readiness does not mention OIDC', async () => {
    app = await buildTestApp(database);

    const placed = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: withApiKey,
      payload: { email: 'api@example.com', quantity: 1 },
    });
    const ready = await app.inject({ method: 'GET', url: '/health/ready' });

    expect(placed.statusCode).toBe(201);
    expect(ready.json()).toEqual({ status: 'ok' });
  });

  it.each([
    ['GET', '/'],
    ['GET', '/login?returnUrl=/orders'],
    ['POST', '/signin-oidc'],
    ['GET', '/logout'],
    ['POST', '/backchannel-logout'],
  ] as const)('%s %s → 503 naming OIDC_ISSUER', async (method, url) => {
    app = await buildTestApp(database);

    const response = await app.inject({ method, url });

    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ statusCode: 503, message: expect.stringContaining('OIDC_ISSUER') });
  });

  it('BFF: X-CSRF is still checked first (400), then 503', async () => {
    app = await buildTestApp(database);

    const withoutHeader = await app.inject({ method: 'GET', url: '/bff/orders' });
    const withHeader = await app.inject({ method: 'GET', url: '/bff/orders', headers: { 'x-csrf': '1' } });

    expect(withoutHeader.statusCode).toBe(400);
    expect(withHeader.statusCode).toBe(503);
    expect(withHeader.json().message).toContain('OIDC_ISSUER');
  });

  it('GET /orders: no token is 401 with a Bearer challenge; a token cannot be judged (503)', async () => {
    app = await buildTestApp(database);

    const anonymous = await app.inject({ method: 'GET', url: '/orders' });
    const withToken = await app.inject({
      method: 'GET',
      url: '/orders',
      headers: { authorization: 'Bearer a.b.c' },
    });

    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    expect(withToken.statusCode).toBe(503);
    expect(withToken.json().message).toMatch(/^Bearer authentication is not configured/);
  });
});

describe('with an unreachable OIDC_ISSUER', () => {
  it('starts, serves the API, answers 503 for sign-in, and recovers once discovery succeeds', async () => {
    const port = await findFreePort();
    app = await buildTestApp(database, {
      environment: {
        OIDC_ISSUER: `http://127.0.0.1:${port}`,
        OIDC_CLIENT_ID: FAKE_CLIENT_ID,
        OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
        SESSION_SECRET: 'availability-test-session-secret-0123456789',
      },
      deps: { discoveryRetry: { initialDelayMs: 20, maxDelayMs: 100 } },
    });

    const placed = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: withApiKey,
      payload: { email: 'api@example.com', quantity: 1 },
    });
    const readyWhileDiscovering = await app.inject({ method: 'GET', url: '/health/ready' });
    const homeWhileDiscovering = await app.inject({ method: 'GET', url: '/' });
    expect(placed.statusCode).toBe(201);
    expect(readyWhileDiscovering.statusCode).toBe(200);
    expect(readyWhileDiscovering.json()).toEqual({ status: 'ok', oidc: 'discovering' });
    expect(homeWhileDiscovering.statusCode).toBe(503);
    expect(homeWhileDiscovering.json().message).toMatch(/temporarily unavailable/);

    issuer = await startFakeIssuer(port);
    await app.oidc.whenReady();

    const ready = await app.inject({ method: 'GET', url: '/health/ready' });
    const home = await app.inject({ method: 'GET', url: '/' });
    expect(ready.json()).toEqual({ status: 'ok', oidc: 'ready' });
    expect(home.statusCode).toBe(302);
    expect(home.headers.location).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/authorize\\?`));
  });
});
