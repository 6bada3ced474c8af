import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, withApiKey } from './helpers/app.js';
import { countRows, createTestDatabase, type TestDatabase } from './helpers/database.js';
import {
  FAKE_CLIENT_ID,
  FAKE_CLIENT_SECRET,
  type FakeIssuer,
  startFakeIssuer,
} from './helpers/fake-issuer.js';

/**
 * Control characters, invalid UTF-8 and lone surrogates anywhere in a request are
 * 400 with the usual body, from one guard, before any route. (Every route and position at random:
 * property.test.ts.)
 */

let database: TestDatabase;
let issuer: FakeIssuer;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  issuer = await startFakeIssuer();
  app = await buildTestApp(database, {
    environment: {
      OIDC_ISSUER: issuer.issuer,
      OIDC_CLIENT_ID: FAKE_CLIENT_ID,
      OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
      SESSION_SECRET: 'input-guard-test-session-secret-0123456789',
    },
  });
});
afterAll(async () => {
  await app?.close();
  await issuer?.close();
  await database?.dispose();
});

function expectRefused(response: { statusCode: number; json(): unknown }) {
  expect(response.statusCode).toBe(400);
  expect(response.json()).toEqual({ statusCode: 400, message: expect.any(String) });
}

describe('one guard for every request', () => {
  it.each([
    '/orders/%00',
    '/orders/1%00',
    '/orders/%ED%A0%80',
    '/orders/%C0',
    '/orders/%1F',
    '/orders/%7F',
    '/no-such-route/%00',
    '/login?returnUrl=%00',
    '/login?returnUrl=/app%0A',
    '/login?%00=x',
    '/login?returnUrl=%ED%B0%80',
    '/orders/1?x=%E2%82',
  ])('GET %s → 400 {statusCode, message}', async (url) => {
    expectRefused(await app.inject({ method: 'GET', url, headers: withApiKey }));
  });

  it.each([
    ['a NUL in x-api-key', { 'x-api-key': 'a\u0000b' }],
    ['a control character in a cookie', { cookie: '__Host-orders-session=a\u0001b' }],
    ['a lone surrogate in authorization', { authorization: 'Bearer \uD800' }],
  ])('%s → 400', async (_case, headers) => {
    expectRefused(await app.inject({ method: 'GET', url: '/orders/1', headers }));
  });

  it('a JSON body with a NUL or a lone surrogate → 400, and the handler never writes', async () => {
    for (const payload of [
      '{"email":"a\\u0000@example.com","quantity":1}',
      '{"email":"\\ud800@example.com","quantity":1}',
    ]) {
      expectRefused(
        await app.inject({
          method: 'POST',
          url: '/orders',
          headers: { ...withApiKey, 'content-type': 'application/json' },
          payload,
        }),
      );
    }
    expect(await countRows(database, 'orders')).toBe(0);
  });

  it.each(['logout_token=%00', 'logout_token=%ED%A0%80', 'state=a%01b', '%00=x'])(
    'a form body %s → 400',
    async (payload) => {
      expectRefused(
        await app.inject({
          method: 'POST',
          url: '/backchannel-logout',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload,
        }),
      );
    },
  );

  it('ordinary requests pass: tab in a header, UTF-8 text, encoded slashes', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/health/live?x=%C3%A9t%C3%A9&y=a+b',
      headers: { 'user-agent': 'a\tb' },
    });
    expect(response.statusCode).toBe(200);
  });
});
