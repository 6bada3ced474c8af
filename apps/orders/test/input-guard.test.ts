import { describe, expect, it } from 'vitest';
import { withApiKey } from './helpers/app.js';
import { countRows } from './helpers/database.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * Control characters, invalid UTF-8 and lone surrogates anywhere in a request are
 * 400 with the usual body, from one guard, before any route. (Every route and position at random:
 * property.test.ts.)
 */

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET: 'input-guard-test-session-secret-0123456789',
  },
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
    '/login?returnUrl=/fixture.app%0A',
    '/login?%00=x',
    '/login?returnUrl=%ED%B0%80',
    '/orders/1?x=%E2%82',
  ])('GET %s → 400 {statusCode, message}', async (url) => {
    expectRefused(await fixture.app.inject({ method: 'GET', url, headers: withApiKey }));
  });

  it.each([
    ['a NUL in x-api-key', { 'x-api-key': 'a\u0000b' }],
    ['a control character in a cookie', { cookie: '__Host-orders-session=a\u0001b' }],
    ['a lone surrogate in authorization', { authorization: 'Bearer \uD800' }],
  ])('%s → 400', async (_case, headers) => {
    expectRefused(await fixture.app.inject({ method: 'GET', url: '/orders/1', headers }));
  });

  it('a JSON body with a NUL or a lone surrogate → 400, and the handler never writes', async () => {
    for (const payload of [
      '{"email":"a\\u0000@example.com","quantity":1}',
      '{"email":"\\ud800@example.com","quantity":1}',
    ]) {
      expectRefused(
        await fixture.app.inject({
          method: 'POST',
          url: '/orders',
          headers: { ...withApiKey, 'content-type': 'application/json' },
          payload,
        }),
      );
    }
    expect(await countRows(fixture.database, 'orders')).toBe(0);
  });

  it.each(['logout_token=%00', 'logout_token=%ED%A0%80', 'state=a%01b', '%00=x'])(
    'a form body %s → 400',
    async (payload) => {
      expectRefused(
        await fixture.app.inject({
          method: 'POST',
          url: '/backchannel-logout',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload,
        }),
      );
    },
  );

  it('ordinary requests pass: tab in a header, UTF-8 text, encoded slashes', async () => {
    const response = await fixture.app.inject({
      method: 'GET',
      url: '/health/live?x=%C3%A9t%C3%A9&y=a+b',
      headers: { 'user-agent': 'a\tb' },
    });
    expect(response.statusCode).toBe(200);
  });
});
