import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { TEST_SECRETS, WEB_REDIRECT_URI } from './helpers/seed.js';
import { ALICE, CONSENTING, pkcePair, signInSeed } from './sign-in-fixtures.js';

/**
 * Open redirects (RFC 9700 §4.11, RFC 6749 §10.15): no endpoint sends a browser to a URL that is
 * not registered for the client, whatever trick the URL uses. `redirect_uri` is compared exactly
 * (RFC 9700 §2.1), so every variant below is refused at /authorize (GET and POST) and at PAR, and a
 * `post_logout_redirect_uri` that is not exactly registered never becomes a redirect or a link.
 */

let started: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  started = await startTestApp({ seed: signInSeed() });
});
afterAll(async () => {
  await started?.close();
});

/** Variants of the registered `https://web.example.test/callback` that lead (or might lead) elsewhere. */
const REDIRECT_TRICKS: Array<[string, string]> = [
  ['another host', 'https://evil.example/callback'],
  ['scheme-relative', '//evil.example/callback'],
  ['scheme without slashes', 'https:evil.example/callback'],
  ['scheme-relative with the registered path', '//web.example.test/callback'],
  ['userinfo naming the registered host', 'https://web.example.test@evil.example/callback'],
  ['userinfo before the registered host', 'https://evil.example@web.example.test/callback'],
  ['encoded at sign', 'https://web.example.test%40evil.example/callback'],
  ['backslash after the host', 'https://web.example.test\\@evil.example/callback'],
  ['backslashes instead of slashes', 'https:\\\\evil.example\\callback'],
  ['path traversal', 'https://web.example.test/callback/../../evil'],
  ['encoded dots', 'https://web.example.test/callback/%2e%2e/%2e%2e/evil'],
  ['encoded slash', 'https://web.example.test/callback%2F..%2F..%2Fevil'],
  ['registered host as a subdomain', 'https://web.example.test.evil.example/callback'],
  ['suffix of the host', 'https://evilweb.example.test/callback'],
  ['extra path', 'https://web.example.test/callback/extra'],
  ['trailing slash', 'https://web.example.test/callback/'],
  ['extra query', `${WEB_REDIRECT_URI}?next=https://evil.example`],
  ['fragment', `${WEB_REDIRECT_URI}#@evil.example`],
  ['explicit port', 'https://web.example.test:443/callback'],
  ['other scheme', 'http://web.example.test/callback'],
  ['javascript', 'javascript:alert(document.domain)//https://web.example.test/callback'],
  ['data', 'data:text/html,<script>alert(1)</script>'],
  ['upper-case host', 'https://WEB.example.test/callback'],
  ['leading space', ` ${WEB_REDIRECT_URI}`],
  ['tab inside', 'https://web.example.test/call\tback'],
  ['NUL byte', `${WEB_REDIRECT_URI}%00`],
  ['IDN look-alike', 'https://wеb.example.test/callback'],
];

function expectNoRedirect(response: LightMyRequestResponse) {
  expect(response.headers.location).toBeUndefined();
  expect(response.statusCode).toBe(400);
  expect(response.headers['content-type']).toMatch(/^text\/html/);
  expect(response.body).not.toContain('evil.example');
}

function authorizeParams(redirectUri: string): Record<string, string> {
  return {
    response_type: 'code',
    client_id: 'web',
    redirect_uri: redirectUri,
    scope: 'openid',
    state: 'st',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  };
}

describe('/authorize refuses every redirect_uri that is not exactly registered', () => {
  it.each(REDIRECT_TRICKS)('GET, %s: 400 page, no Location', async (_name, redirectUri) => {
    const response = await started.app.inject({
      method: 'GET',
      url: `/authorize?${new URLSearchParams(authorizeParams(redirectUri))}`,
    });
    expectNoRedirect(response);
  });

  it.each(REDIRECT_TRICKS)('POST, %s: 400 page, no Location', async (_name, redirectUri) => {
    const response = await started.app.inject({
      method: 'POST',
      url: '/authorize',
      headers: FORM,
      payload: form(authorizeParams(redirectUri)),
    });
    expectNoRedirect(response);
  });

  it.each(REDIRECT_TRICKS)('PAR, %s: 400 JSON error, nothing stored', async (_name, redirectUri) => {
    const response = await started.app.inject({
      method: 'POST',
      url: '/par',
      headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
      payload: form(authorizeParams(redirectUri)),
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.json().error).toBe('invalid_request');
  });

  it('the registered URI itself is accepted (the table above fails for the right reason)', async () => {
    const response = await started.app.inject({
      method: 'GET',
      url: `/authorize?${new URLSearchParams(authorizeParams(WEB_REDIRECT_URI))}`,
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toMatch(/^\/interaction\//);
  });

  it('an error for a valid client and redirect URI goes only to that registered URI', async () => {
    const response = await started.app.inject({
      method: 'GET',
      url: `/authorize?${new URLSearchParams({ ...authorizeParams(WEB_REDIRECT_URI), response_type: 'token' })}`,
    });
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(WEB_REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('unsupported_response_type');
  });
});

describe('/logout redirects only to an exactly registered post_logout_redirect_uri', () => {
  const registered = CONSENTING.postLogoutRedirectUri; // https://consenting.example.test/signed-out
  const tricks: Array<[string, string]> = [
    ['another host', 'https://evil.example/signed-out'],
    ['scheme-relative', '//evil.example/signed-out'],
    ['scheme without slashes', 'https:evil.example'],
    ['userinfo', 'https://consenting.example.test@evil.example/signed-out'],
    ['backslash', 'https://consenting.example.test\\@evil.example/signed-out'],
    ['encoded dots', 'https://consenting.example.test/signed-out/%2e%2e/%2e%2e/evil'],
    ['path traversal', 'https://consenting.example.test/signed-out/../evil'],
    ['subdomain', 'https://consenting.example.test.evil.example/signed-out'],
    ['extra query', `${registered}?next=https://evil.example`],
    ['trailing slash', `${registered}/`],
    ['javascript', 'javascript:alert(1)'],
    ['relative', '/signed-out'],
  ];

  async function signedInBrowser() {
    const { browser, page } = await openLoginPage(started.app);
    expect((await submitLogin(browser, page, ALICE.username, ALICE.password)).statusCode).toBe(303);
    return browser;
  }

  // RP-Initiated Logout 1.0 §3: refused with an error page that ends nothing (no silent sign-out).
  it.each(tricks)('%s: an error page (400), no Location, no link to it', async (_name, target) => {
    for (const method of ['GET', 'POST'] as const) {
      const browser = await signedInBrowser();
      const params = { client_id: CONSENTING.clientId, post_logout_redirect_uri: target, state: 's' };
      const response =
        method === 'GET'
          ? await browser.get(`/logout?${new URLSearchParams(params)}`)
          : await browser.post('/logout', params);
      expect(response.statusCode).toBe(400);
      expect(response.headers.location).toBeUndefined();
      expect(response.body).not.toContain('evil.example');
      expect(response.headers['content-security-policy']).not.toContain('evil.example');
    }
  });

  it('the registered URI is followed (with state)', async () => {
    const browser = new TestBrowser(started.app);
    const response = await browser.get(
      `/logout?${new URLSearchParams({ client_id: CONSENTING.clientId, post_logout_redirect_uri: registered, state: 's' })}`,
    );
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(`${registered}?state=s`);
  });

  it("another client's registered URI is refused", async () => {
    const browser = new TestBrowser(started.app);
    const response = await browser.get(
      `/logout?${new URLSearchParams({ client_id: 'web', post_logout_redirect_uri: registered })}`,
    );
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
  });
});

describe('every redirect the pages send stays on this server or goes to a registered URI', () => {
  it('login and consent steps redirect to relative interaction paths; the code goes to the registered URI', async () => {
    const { browser, page } = await openLoginPage(started.app);
    const redirect = await submitLogin(browser, page, ALICE.username, ALICE.password);
    const location = new URL(redirect.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(WEB_REDIRECT_URI);
  });
});
