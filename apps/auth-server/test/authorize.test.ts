import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, hiddenFields, locationOf, TestBrowser } from './browser.js';
import { TEST_ISSUER } from './helpers/app.js';
import { SPA_REDIRECT_URI, WEB_REDIRECT_URI } from './helpers/seed.js';
import { ALICE, authorizePath, CONSENTING, pkcePair, startSignInApp } from './sign-in-fixtures.js';

let started: Awaited<ReturnType<typeof startSignInApp>>;
beforeAll(async () => {
  started = await startSignInApp();
});
afterAll(async () => {
  await started?.close();
});

const { challenge } = pkcePair();
const webRequest = {
  response_type: 'code',
  client_id: 'web',
  redirect_uri: WEB_REDIRECT_URI,
  scope: 'openid email',
  state: 'state-123',
  nonce: 'nonce-123',
  code_challenge: challenge,
  code_challenge_method: 'S256',
};

/** A browser with an SSO session for alice, made through the real login page. */
async function signedInBrowser(): Promise<TestBrowser> {
  const browser = new TestBrowser(started.app);
  const page = await browser.follow(await browser.get(authorizePath(webRequest)));
  const response = await browser.post(browser.lastUrl, {
    ...hiddenFields(page.body),
    username: ALICE.username,
    password: ALICE.password,
  });
  expect(response.statusCode).toBe(303);
  expect(locationOf(response).origin).toBe(new URL(WEB_REDIRECT_URI).origin);
  return browser;
}

describe('GET /authorize: errors shown on a page, never redirected (RFC 6749 §4.1.2.1)', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['unknown client', { ...webRequest, client_id: 'nobody' }],
    ['missing client_id', { ...webRequest, client_id: '' }],
    ['unregistered redirect_uri', { ...webRequest, redirect_uri: 'https://evil.example.test/callback' }],
    ['redirect_uri with an extra query', { ...webRequest, redirect_uri: `${WEB_REDIRECT_URI}?x=1` }],
    ['redirect_uri with a trailing slash', { ...webRequest, redirect_uri: `${WEB_REDIRECT_URI}/` }],
    ['redirect_uri of another client', { ...webRequest, redirect_uri: SPA_REDIRECT_URI }],
  ];
  it.each(cases)('%s → 400 error page without Location', async (_name, params) => {
    const response = await started.app.inject({ method: 'GET', url: authorizePath(params) });
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('<h1');
  });

  it('a repeated client_id → error page, no redirect', async () => {
    const url = `${authorizePath(webRequest)}&client_id=web`;
    const response = await started.app.inject({ method: 'GET', url });
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
  });
});

describe('GET /authorize: errors redirected with error, state and iss (RFC 9207)', () => {
  const { code_challenge: _challenge, code_challenge_method: _method, ...withoutPkce } = webRequest;
  const cases: Array<[string, Record<string, string>, string, string]> = [
    [
      'response_type=token',
      { ...webRequest, response_type: 'token' },
      WEB_REDIRECT_URI,
      'unsupported_response_type',
    ],
    ['plain PKCE', { ...webRequest, code_challenge_method: 'plain' }, WEB_REDIRECT_URI, 'invalid_request'],
    [
      'public client without PKCE',
      { ...withoutPkce, client_id: 'spa', redirect_uri: SPA_REDIRECT_URI, scope: 'openid' },
      SPA_REDIRECT_URI,
      'invalid_request',
    ],
    ['prompt=none without a session', { ...webRequest, prompt: 'none' }, WEB_REDIRECT_URI, 'login_required'],
  ];
  it.each(cases)('%s → %s', async (_name, params, redirectUri, error) => {
    const response = await started.app.inject({ method: 'GET', url: authorizePath(params) });
    expect(response.statusCode).toBe(302);
    const location = locationOf(response);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('state')).toBe('state-123');
    expect(location.searchParams.get('iss')).toBe(TEST_ISSUER);
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('a repeated parameter → invalid_request at the redirect URI', async () => {
    const response = await started.app.inject({
      method: 'GET',
      url: `${authorizePath(webRequest)}&scope=openid`,
    });
    const location = locationOf(response);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('state')).toBe('state-123');
  });

  it('prompt=none with a session but no remembered consent → consent_required', async () => {
    const browser = await signedInBrowser();
    const response = await browser.get(
      authorizePath({
        ...webRequest,
        client_id: CONSENTING.clientId,
        redirect_uri: CONSENTING.redirectUri,
        prompt: 'none',
      }),
    );
    expect(response.statusCode).toBe(302);
    const location = locationOf(response);
    expect(location.origin).toBe(new URL(CONSENTING.redirectUri).origin);
    expect(location.searchParams.get('error')).toBe('consent_required');
    expect(location.searchParams.get('state')).toBe('state-123');
    expect(location.searchParams.get('iss')).toBe(TEST_ISSUER);
  });

  it('prompt=none with a session and a skip_consent client → code without any page', async () => {
    const browser = await signedInBrowser();
    const response = await browser.get(authorizePath({ ...webRequest, prompt: 'none' }));
    expect(response.statusCode).toBe(302);
    const location = locationOf(response);
    expect(location.searchParams.get('code')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe('state-123');
  });
});

describe('response_mode=form_post', () => {
  it('answers an error with an auto-submitting form page carrying error, state and iss', async () => {
    const response = await started.app.inject({
      method: 'GET',
      url: authorizePath({ ...webRequest, response_mode: 'form_post', prompt: 'none' }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers.location).toBeUndefined();
    expect(formAction(response.body)).toBe(WEB_REDIRECT_URI);
    expect(hiddenFields(response.body)).toEqual({
      error: 'login_required',
      error_description: expect.any(String),
      state: 'state-123',
      iss: TEST_ISSUER,
    });
    expect(response.body).toContain('src="/assets/form-post.js"');
    expect(response.body).not.toMatch(/<script>/);
    // The page must be allowed to post to the client (CSP form-action).
    expect(response.headers['content-security-policy']).toContain(
      `form-action 'self' ${new URL(WEB_REDIRECT_URI).origin}`,
    );
  });

  it('answers a success with a form page carrying code, state and iss', async () => {
    const browser = await signedInBrowser();
    const response = await browser.get(authorizePath({ ...webRequest, response_mode: 'form_post' }));
    expect(response.statusCode).toBe(200);
    const fields = hiddenFields(response.body);
    expect(Object.keys(fields).sort()).toEqual(['code', 'iss', 'state']);
    expect(fields.state).toBe('state-123');
    expect(fields.iss).toBe(TEST_ISSUER);
  });
});

describe('POST /authorize (form body)', () => {
  it('behaves like GET: no session → the login page of a new interaction', async () => {
    const browser = new TestBrowser(started.app);
    const response = await browser.post('/authorize', webRequest);
    expect(response.statusCode).toBe(303);
    expect(locationOf(response).pathname).toMatch(/^\/interaction\/[\w-]+\/login$/);
  });
});

describe('pages and assets', () => {
  it('the login page has a strict CSP, no-store, and the contract form', async () => {
    const browser = new TestBrowser(started.app);
    const page = await browser.follow(await browser.get(authorizePath(webRequest)));
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-store');
    // The login post may be answered by a redirect to the client, which form-action also governs.
    expect(csp).toContain(`form-action 'self' ${new URL(WEB_REDIRECT_URI).origin}`);
    expect(page.body).toContain('<form method="post"');
    expect(page.body).toContain('name="username"');
    expect(page.body).toContain('name="password"');
    expect(Object.keys(hiddenFields(page.body))).toEqual(['csrf']);
  });

  it('serves the stylesheet and the form_post script', async () => {
    const css = await started.app.inject({ method: 'GET', url: '/assets/styles.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    const script = await started.app.inject({ method: 'GET', url: '/assets/form-post.js' });
    expect(script.statusCode).toBe(200);
    expect(script.body).toContain('submit()');
    const missing = await started.app.inject({ method: 'GET', url: '/assets/../app.ts' });
    expect(missing.statusCode).toBe(404);
  });
});
