import { createTestClock } from '@oidc-orders/oauth-core/testing';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { ALICE, signInSeed } from './sign-in-fixtures.js';

const clock = createTestClock(Math.floor(Date.now() / 1000));
let app: TestApp;
let close: () => Promise<void>;
let password: string = ALICE.password;
let totpSecret = '';

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: signInSeed(), clock }));
});
afterAll(() => close());

const codeNow = () =>
  TOTP.generate({ secret: Secret.fromBase32(totpSecret), timestamp: clock.nowSeconds() * 1000 });

/** Follows the redirect chain of /account's sign-in: login, then the otp page when Alice has an app. */
async function signIn(browser: TestBrowser): Promise<LightMyRequestResponse> {
  let response = await browser.get('/account');
  if (response.statusCode === 200) return response;
  expect(locationOf(response).pathname).toMatch(/\/interaction\/[^/]+\/login$/);
  let page = await browser.get(response.headers.location as string);
  response = await browser.post(browser.lastUrl, {
    ...hiddenFields(page.body),
    username: ALICE.username,
    password,
  });
  if (locationOf(response).pathname.endsWith('/otp')) {
    page = await browser.get(response.headers.location as string);
    clock.advance(30);
    response = await browser.post(browser.lastUrl, { ...hiddenFields(page.body), otp: codeNow() });
  }
  expect(locationOf(response).pathname).toBe('/account');
  return browser.get('/account');
}

const csrfOf = (page: LightMyRequestResponse) => hiddenFields(page.body).csrf!;

const CHROME_ON_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';

/** The `<li>` of each listed session. */
const sessionItems = (page: LightMyRequestResponse) =>
  [...page.body.matchAll(/<li data-session[^>]*>[\s\S]*?<\/li>/g)].map((match) => match[0]);

describe('account page', () => {
  let main: TestBrowser;

  it('asks an anonymous visitor to sign in, then shows name and e-mail', async () => {
    main = new TestBrowser(app, { userAgent: CHROME_ON_LINUX, remoteAddress: '198.51.100.4' });
    const page = await signIn(main);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Alice Example');
    expect(page.body).toContain('alice@example.test');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
  });

  it('refuses a change without the CSRF token', async () => {
    const response = await main.post('/account/sessions/sign-out-others', {});
    expect(response.statusCode).toBe(403);
  });

  it('adds an authenticator app (QR code and secret, confirmed by a code) and shows recovery codes once', async () => {
    const account = await main.get('/account');
    const enrol = await main.post('/account/totp', { csrf: csrfOf(account) });
    expect(enrol.statusCode).toBe(200);
    totpSecret = /data-totp-secret="([A-Z2-7]+)"/.exec(enrol.body)![1]!;
    const confirmed = await main.post('/account/totp/confirm', {
      ...hiddenFields(enrol.body),
      otp: codeNow(),
    });
    expect(confirmed.statusCode).toBe(200);
    expect([...confirmed.body.matchAll(/data-recovery-code=/g)]).toHaveLength(10);
    const back = await main.post('/account', hiddenFields(confirmed.body));
    expect(locationOf(back).pathname).toBe('/account');
    const after = await main.get('/account');
    expect([...after.body.matchAll(/data-factor=/g)]).toHaveLength(1);
    expect(after.body).toContain('data-remaining="10"');
  });

  it('renames the app', async () => {
    const account = await main.get('/account');
    const id = /data-factor="([^"]+)"/.exec(account.body)![1]!;
    const renamed = await main.post(`/account/totp/${id}/rename`, { csrf: csrfOf(account), name: 'Phone' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.body).toContain('value="Phone"');
  });

  it('lists each session with its device and browser, address and times; this one is marked', async () => {
    const other = new TestBrowser(app, { userAgent: FIREFOX_ON_WINDOWS, remoteAddress: '203.0.113.9' });
    clock.advance(120);
    expect((await signIn(other)).statusCode).toBe(200);
    const items = sessionItems(await main.get('/account'));
    expect(items).toHaveLength(2);
    const [mine, theirs] = items as [string, string];
    expect(mine).toContain('data-session="current"');
    expect(mine).toContain('<strong>Chrome on Linux</strong> (this session)');
    expect(mine).toContain('from 198.51.100.4');
    // This session was used again (this very request) two minutes after it signed in.
    const [, signedInAt, lastUsedAt] = /Signed in ([\d: -]+) from .*, last used ([\d: -]+)</.exec(mine)!;
    expect(Date.parse(`${lastUsedAt}Z`) - Date.parse(`${signedInAt}Z`)).toBeGreaterThanOrEqual(60_000);
    expect(theirs).not.toContain('this session');
    expect(theirs).toContain('<strong>Firefox on Windows</strong>');
    expect(theirs).toContain('from 203.0.113.9');
    expect(theirs).toMatch(/Signed in \d{4}-\d\d-\d\d \d\d:\d\d from 203\.0\.113\.9, last used \d{4}-/);
    // The other browser's own page marks its own session.
    expect(
      sessionItems(await other.get('/account')).find((item) => item.includes('(this session)')),
    ).toContain('Firefox on Windows');
  });

  it('signs out other sessions; this one stays', async () => {
    const other = new TestBrowser(app);
    expect((await signIn(other)).statusCode).toBe(200);
    const account = await main.get('/account');
    expect(sessionItems(account).length).toBeGreaterThanOrEqual(2);
    const response = await main.post('/account/sessions/sign-out-others', { csrf: csrfOf(account) });
    expect(response.statusCode).toBe(200);
    expect(sessionItems(response)).toHaveLength(1);
    expect(sessionItems(response)[0]).toContain('(this session)');
    expect((await main.get('/account')).statusCode).toBe(200);
    const otherAgain = await other.get('/account');
    expect(otherAgain.statusCode).toBe(303);
    expect(locationOf(otherAgain).pathname).toMatch(/\/login$/);
  });

  it('changes the password: current one required, common ones refused; the session stays', async () => {
    const account = await main.get('/account');
    const csrf = csrfOf(account);
    const wrong = await main.post('/account/password', {
      csrf,
      current_password: 'not-it',
      new_password: 'a-much-better-passphrase',
    });
    expect(wrong.statusCode).toBe(400);
    const common = await main.post('/account/password', {
      csrf,
      current_password: password,
      new_password: 'password123',
    });
    expect(common.statusCode).toBe(400);
    const changed = await main.post('/account/password', {
      csrf,
      current_password: password,
      new_password: 'a-much-better-passphrase',
    });
    expect(changed.statusCode).toBe(200);
    password = 'a-much-better-passphrase';
    expect((await main.get('/account')).statusCode).toBe(200);
    // The new password signs in (with the app as second factor).
    expect((await signIn(new TestBrowser(app))).statusCode).toBe(200);
  });

  it('sensitive changes need an authentication younger than five minutes', async () => {
    clock.advance(301);
    const account = await main.get('/account');
    const response = await main.post('/account/recovery-codes', { csrf: csrfOf(account) });
    expect(response.statusCode).toBe(303);
    expect(locationOf(response).pathname).toMatch(/\/login$/);
    // Signing in again (password and app) brings the person back, and the change then works.
    await main.get(response.headers.location as string);
    const page = await main.get(main.lastUrl);
    let next = await main.post(main.lastUrl, {
      ...hiddenFields(page.body),
      username: ALICE.username,
      password,
    });
    const otpPage = await main.get(next.headers.location as string);
    clock.advance(30);
    next = await main.post(main.lastUrl, { ...hiddenFields(otpPage.body), otp: codeNow() });
    expect(locationOf(next).pathname).toBe('/account');
    const fresh = await main.get('/account');
    const regenerated = await main.post('/account/recovery-codes', { csrf: csrfOf(fresh) });
    expect(regenerated.statusCode).toBe(200);
    expect([...regenerated.body.matchAll(/data-recovery-code=/g)]).toHaveLength(10);
  });

  it('lists the apps with access and removes one: its refresh token then fails', async () => {
    const tokens = await webClientTokens(app, 'openid offline_access orders.read');
    const account = await main.get('/account');
    expect(account.body).toContain('data-app="web"');
    const revoked = await main.post('/account/apps/web/revoke', { csrf: csrfOf(account) });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.body).not.toContain('data-app="web"');
    const refresh = await refreshWithWebClient(app, tokens.refresh_token as string);
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
  });

  it('removes the app', async () => {
    const account = await main.get('/account');
    const id = /data-factor="([^"]+)"/.exec(account.body)![1]!;
    const removed = await main.post(`/account/totp/${id}/remove`, { csrf: csrfOf(account) });
    expect(removed.statusCode).toBe(200);
    expect(removed.body).not.toContain('data-factor=');
  });
});
