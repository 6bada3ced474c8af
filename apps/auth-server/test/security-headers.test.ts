import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmLogout, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp } from './helpers/app.js';
import { webClientTokens } from './helpers/flows.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { TEST_SECRETS, WEB_REDIRECT_URI } from './helpers/seed.js';
import { ALICE, CONSENTING, pkcePair, signInSeed } from './sign-in-fixtures.js';

/**
 * Security headers on every page a browser is shown (CSP with frame-ancestors, no framing, no
 * referrer, never cached), and RFC 6749 §5.1 `Cache-Control: no-store` + `Pragma: no-cache` on every
 * token-bearing JSON response and error.
 */

let started: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  started = await startTestApp({
    seed: {
      ...signInSeed(),
      clients: [
        ...(signInSeed().clients ?? []),
        {
          client_id: 'tv',
          grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
          scope: 'openid profile',
        },
      ],
    },
    env: { LOGIN_MAX_FAILURES_PER_USERNAME: '1' },
  });
});
afterAll(async () => {
  await started?.close();
});

function expectPageHeaders(name: string, response: LightMyRequestResponse) {
  const headers = response.headers;
  expect(headers['content-type'], name).toMatch(/^text\/html; charset=utf-8/);
  const csp = String(headers['content-security-policy'] ?? '');
  for (const directive of [
    "default-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "script-src 'self'",
  ]) {
    expect(csp, `${name}: ${directive}`).toContain(directive);
  }
  expect(csp, name).not.toContain('unsafe-inline');
  expect(headers['x-frame-options'], name).toBe('DENY');
  expect(headers['referrer-policy'], name).toBe('no-referrer');
  expect(headers['x-content-type-options'], name).toBe('nosniff');
  expect(headers['cache-control'], name).toBe('no-store');
}

function expectNoStore(name: string, response: LightMyRequestResponse) {
  expect(response.headers['cache-control'], name).toBe('no-store');
  expect(response.headers.pragma, name).toBe('no-cache');
}

const authorize = (params: Record<string, string>) =>
  `/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: 'web',
    redirect_uri: WEB_REDIRECT_URI,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...params,
  })}`;

describe('every page', () => {
  it('carries the CSP (frame-ancestors none), X-Frame-Options, Referrer-Policy, nosniff and no-store', async () => {
    const pages: Array<[string, LightMyRequestResponse]> = [];
    const { browser, page } = await openLoginPage(started.app);
    pages.push(['login page', page]);
    pages.push(['failed login', await submitLogin(browser, page, ALICE.username, 'wrong')]);
    pages.push(['locked login (429)', await submitLogin(browser, page, ALICE.username, 'wrong')]);
    expect(pages.at(-1)![1].statusCode).toBe(429);

    pages.push([
      'authorize error page (unknown client)',
      await started.app.inject({ method: 'GET', url: authorize({ client_id: 'nobody' }) }),
    ]);
    pages.push([
      'unknown interaction',
      await started.app.inject({ method: 'GET', url: '/interaction/unknown-id/login' }),
    ]);

    const consenting = await openLoginPage(started.app, {
      clientId: CONSENTING.clientId,
      redirectUri: CONSENTING.redirectUri,
      scope: 'openid',
    });
    const consentPage = await consenting.browser.follow(
      await submitLogin(consenting.browser, consenting.page, 'bob', 'bob-password-for-tests'),
    );
    expect(consentPage.body).toContain('name="decision"');
    pages.push(['consent page', consentPage]);

    // SSO: the same browser, response_mode=form_post → the auto-submitting page.
    pages.push([
      'form_post page',
      await consenting.browser.get(
        `/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: 'web',
          redirect_uri: WEB_REDIRECT_URI,
          scope: 'openid',
          response_mode: 'form_post',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        })}`,
      ),
    ]);

    const device = new TestBrowser(started.app);
    pages.push(['device code page', await device.get('/device')]);
    pages.push(['device code page (csrf refused)', await device.post('/device', { user_code: 'BCDF-GHJK' })]);
    const logoutConfirmation = await consenting.browser.get('/logout');
    pages.push(['logout confirmation page', logoutConfirmation]);
    pages.push(['signed-out page', await confirmLogout(consenting.browser, logoutConfirmation)]);

    for (const [name, response] of pages) {
      expect(response.statusCode, name).toBeLessThan(500);
      expectPageHeaders(name, response);
    }
    expect(pages.map(([name]) => name)).toHaveLength(11);
  });
});

describe('token-bearing JSON responses', () => {
  it('token success and error, device authorization, PAR, introspection and revocation are no-store + no-cache', async () => {
    const tokens = await webClientTokens(started.app);
    const web = basicAuthorization('web', TEST_SECRETS.web);
    const post = (url: string, payload: Record<string, string>, authorization?: string) =>
      started.app.inject({
        method: 'POST',
        url,
        headers: { ...FORM, ...(authorization ? { authorization } : {}) },
        payload: form(payload),
      });

    const refresh = await post(
      '/token',
      { grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token) },
      web,
    );
    expect(refresh.statusCode).toBe(200);
    expectNoStore('token success', refresh);
    const tokenError = await post('/token', { grant_type: 'refresh_token', refresh_token: 'nope' }, web);
    expect(tokenError.statusCode).toBe(400);
    expectNoStore('token error', tokenError);
    const clientError = await post(
      '/token',
      { grant_type: 'client_credentials' },
      basicAuthorization('web', 'x'),
    );
    expect(clientError.statusCode).toBe(401);
    expectNoStore('token invalid_client', clientError);

    const deviceAuthorization = await post('/device_authorization', { client_id: 'tv', scope: 'openid' });
    expect(deviceAuthorization.statusCode).toBe(200);
    expectNoStore('device authorization', deviceAuthorization);

    const par = await post(
      '/par',
      {
        response_type: 'code',
        redirect_uri: WEB_REDIRECT_URI,
        scope: 'openid',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      },
      web,
    );
    expect(par.statusCode).toBe(201);
    expectNoStore('PAR', par);

    const introspection = await post(
      '/introspect',
      { token: String(tokens.access_token) },
      basicAuthorization('https://api.example.test/orders', TEST_SECRETS.ordersApi),
    );
    expect(introspection.statusCode).toBe(200);
    expectNoStore('introspection', introspection);

    const revocation = await post('/revoke', { token: String(tokens.refresh_token) }, web);
    expect(revocation.statusCode).toBe(200);
    expectNoStore('revocation', revocation);
  });
});
