import { DESIGN_TOKENS_CSS } from '@oidc-orders/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { TEST_SECRETS } from './helpers/seed.js';

/** What Chromium sends when a person opens a URL. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

describe('pages for people, JSON for programs', () => {
  let app: TestApp;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await startTestApp({ env: { NODE_ENV: 'development' } }));
  });
  afterAll(() => close());

  it('the issuer root answers a browser with a landing page linking discovery, JWKS and health', async () => {
    const response = await app.inject({ url: '/', headers: { accept: BROWSER_ACCEPT } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    for (const path of ['/.well-known/openid-configuration', '/jwks', '/health/ready']) {
      expect(response.body).toContain(`href="${path}"`);
    }
    expect(response.body).toContain(
      '<a class="button" href="/account" data-action="account">Your account</a>',
    );
  });

  it('in development the landing page lists the seeded clients and users, never a secret', async () => {
    const response = await app.inject({ url: '/', headers: { accept: BROWSER_ACCEPT } });
    expect(response.body).toContain('<code>web</code>');
    expect(response.body).toContain('<code>alice</code>');
    for (const secret of Object.values(TEST_SECRETS)) expect(response.body).not.toContain(secret);
  });

  it('outside development the landing page lists no client or user', async () => {
    const other = await startTestApp();
    try {
      const response = await other.app.inject({ url: '/', headers: { accept: BROWSER_ACCEPT } });
      expect(response.statusCode).toBe(200);
      expect(response.body).not.toContain('<code>alice</code>');
      expect(response.body).not.toContain('class="dev-only"');
    } finally {
      await other.close();
    }
  });

  it("the pages' stylesheet is the shared design tokens, then the sign-in pages' own rules", async () => {
    const { body } = await app.inject({ method: 'GET', url: '/assets/styles.css' });
    expect(body.startsWith(DESIGN_TOKENS_CSS)).toBe(true);
    const own = body.slice(DESIGN_TOKENS_CSS.length);
    expect(own).toContain('.lead');
    expect(own).not.toContain('--danger-text:');
  });

  it('the issuer root answers a program with JSON links', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const response = await app.inject({ url: '/', headers: accept ? { accept } : {} });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.json()).toHaveProperty('discovery');
    }
  });

  it('an unknown path is a 404 page for a browser and JSON for a program', async () => {
    const page = await app.inject({ url: '/no-such-page', headers: { accept: BROWSER_ACCEPT } });
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('href="/assets/styles.css"');
    expect(page.body).toContain('href="/"');
    const json = await app.inject({ url: '/no-such-page', headers: { accept: '*/*' } });
    expect(json.statusCode).toBe(404);
    expect(json.json()).toMatchObject({ error: 'not_found' });
  });

  it('every page links the favicon, and /favicon.ico answers', async () => {
    const page = await app.inject({ url: '/', headers: { accept: BROWSER_ACCEPT } });
    expect(page.body).toContain('rel="icon" href="/assets/favicon.svg"');
    for (const url of ['/favicon.ico', '/assets/favicon.svg']) {
      const icon = await app.inject({ url });
      expect(icon.statusCode).toBe(200);
      expect(icon.headers['content-type']).toBe('image/svg+xml');
    }
  });

  it('the token endpoint keeps RFC 6749 JSON errors whatever the Accept header', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { accept: BROWSER_ACCEPT, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=nope',
    });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('going back after signing in', () => {
  let app: TestApp;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await startTestApp());
  });
  afterAll(() => close());

  it('Back to the login page of a finished sign-in sends the signed-in browser on to the client', async () => {
    const { browser, page } = await openLoginPage(app);
    const loginUrl = browser.lastUrl;
    expect(loginUrl).toContain('client_id=web');
    const done = await submitLogin(browser, page, 'alice', TEST_SECRETS.alicePassword);
    expect(done.statusCode).toBeLessThan(400);
    // Back: the browser loads the login page of the finished interaction again.
    const back = await browser.get(loginUrl);
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe('https://web.example.test/');
  });

  it('an expired sign-in page of a browser that is not signed in links on to the client', async () => {
    const { browser } = await openLoginPage(app);
    const back = await browser.get('/interaction/finished-one/otp?client_id=web');
    expect(back.statusCode).toBe(400);
    expect(back.body).toContain('interaction_expired');
    expect(back.body).toContain('<a class="button" href="https://web.example.test/">');
    expect(hiddenFields(back.body)).toEqual({});
  });

  it("the account page's own sign-in leads back to the account page", async () => {
    const browser = new TestBrowser(app);
    const start = await browser.get('/account');
    expect(locationOf(start).searchParams.get('client_id')).toBe('account');
    const expired = await browser.get('/interaction/gone/login?client_id=account');
    expect(expired.body).toContain('<a class="button" href="/account">Go to your account</a>');
  });

  it('an unknown client in the URL gives no link at all (never a URL taken from the request)', async () => {
    const { browser } = await openLoginPage(app);
    const expired = await browser.get('/interaction/unknown-id/login?client_id=https%3A%2F%2Fevil.example');
    expect(expired.statusCode).toBe(400);
    expect(expired.body).not.toContain('evil.example');
    // The only way on is this server's own start page.
    expect(expired.body).toContain('<a class="button" href="/">Go to the start page</a>');
  });
});
