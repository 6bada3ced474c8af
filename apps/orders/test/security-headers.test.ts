import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { testConfig } from './helpers/app.js';
import { insertTestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * Every HTML page of this service (the sign-in error pages, the single-page app's document) has a
 * CSP forbidding framing, no referrer, and X-Frame-Options; responses that carry personal data or
 * the sign-in redirect are never cached.
 */

const SESSION_SECRET = 'headers-test-session-secret-0123456789abcdef';

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET,
    BASE_URL: 'https://orders.example.test',
  },
});

function expectPageHeaders(name: string, response: LightMyRequestResponse) {
  expect(response.headers['content-type'], name).toMatch(/^text\/html/);
  const csp = String(response.headers['content-security-policy'] ?? '');
  expect(csp, name).toContain("frame-ancestors 'none'");
  expect(csp, name).toMatch(/default-src '(none|self)'/);
  expect(csp, name).toContain("base-uri 'none'");
  expect(csp, name).not.toContain('unsafe-inline');
  expect(response.headers['x-frame-options'], name).toBe('DENY');
  expect(response.headers['referrer-policy'], name).toBe('no-referrer');
  expect(response.headers['x-content-type-options'], name).toBe('nosniff');
}

describe('pages', () => {
  it('sign-in error pages and the fixture.app document carry CSP frame-ancestors, X-Frame-Options and Referrer-Policy', async () => {
    const errorPage = await fixture.app.inject({
      method: 'POST',
      url: '/signin-oidc',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'state=x',
    });
    expect(errorPage.statusCode).toBe(400);
    expectPageHeaders('sign-in error page', errorPage);
    expect(errorPage.headers['cache-control']).toBe('no-store');

    const document = await fixture.app.inject({ method: 'GET', url: '/app' });
    expect(document.statusCode).toBe(200);
    expectPageHeaders('app document', document);
  });
});

describe('responses that must not be cached', () => {
  it('the sign-in redirect, GET / and the BFF user are no-store', async () => {
    const redirect = await fixture.app.inject({ method: 'GET', url: '/login' });
    expect(redirect.statusCode).toBe(302);
    expect(redirect.headers['cache-control']).toBe('no-store');

    const session = await insertTestSession(fixture.database, testConfig(fixture.environment));
    const home = await fixture.app.inject({ method: 'GET', url: '/', headers: { cookie: session.cookie } });
    expect(home.statusCode).toBe(200);
    expect(home.headers['cache-control']).toBe('no-store');

    const user = await fixture.app.inject({
      method: 'GET',
      url: '/bff/user',
      headers: { cookie: session.cookie, 'x-csrf': '1' },
    });
    expect(user.statusCode).toBe(200);
    expect(user.headers['cache-control']).toBe('no-store');
  });
});
