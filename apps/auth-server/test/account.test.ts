import { createTestClock } from '@oidc-orders/oauth-core/testing';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { ALICE, BOB, CONSENTING, signInSeed } from './sign-in-fixtures.js';

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
async function signIn(
  browser: TestBrowser,
  who: { username: string; password: string } = { username: ALICE.username, password },
): Promise<LightMyRequestResponse> {
  let response = await browser.get('/account');
  if (response.statusCode === 200) return response;
  expect(locationOf(response).pathname).toMatch(/\/interaction\/[^/]+\/login$/);
  let page = await browser.get(response.headers.location as string);
  response = await browser.post(browser.lastUrl, {
    ...hiddenFields(page.body),
    username: who.username,
    password: who.password,
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

/** Post/redirect/get: a change answers 303 to a GET address of /account; returns that page. */
async function resultOf(browser: TestBrowser, response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(303);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(locationOf(response).pathname).toBe('/account');
  const page = await browser.get(response.headers.location as string);
  expect(page.statusCode).toBe(200);
  return page;
}

/** The `<p class="notice">` confirmation at the top, or undefined. */
const okNotice = (page: LightMyRequestResponse) =>
  /<p class="notice" role="status" id="account-notice">([^<]*)<\/p>/.exec(page.body)?.[1];

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
    const page = await resultOf(main, renamed);
    expect(page.body).toContain('value="Phone"');
    expect(okNotice(page)).toBe('Renamed.');
  });

  it('a refused rename shows its error inside that form, on the field, focused, the typed text kept', async () => {
    const account = await main.get('/account');
    const id = /data-factor="([^"]+)"/.exec(account.body)![1]!;
    const refused = await main.post(`/account/totp/${id}/rename`, { csrf: csrfOf(account), name: '   ' });
    expect(locationOf(refused).searchParams.get('form')).toBe(`totp-${id}`);
    const page = await resultOf(main, refused);
    const item = new RegExp(`<li data-factor="${id}"[\\s\\S]*?</li>`).exec(page.body)![0];
    expect(item).toContain('<p class="alert" role="alert" id="error-totp-');
    expect(item).toContain('That app could not be renamed.');
    expect(item).toMatch(
      /name="name" type="text" value=" {3}"[^>]*aria-invalid="true" aria-describedby="error-totp-[^"]+" autofocus/,
    );
    expect(okNotice(page)).toBeUndefined();
    // Reloading the result is a GET: the same page again, nothing re-sent.
    const reloaded = await main.get(main.lastUrl);
    expect(reloaded.body).toBe(page.body);
  });

  it('the result page shows only words this server signed for this browser', async () => {
    const forged = await main.get('/account?result=error&text=Call+0800+now&sig=abc');
    expect(forged.statusCode).toBe(200);
    expect(forged.body).not.toContain('Call 0800 now');
    const other = new TestBrowser(app);
    await signIn(other, BOB);
    const account = await other.get('/account');
    const renamed = await other.post('/account/password', { csrf: csrfOf(account), current_password: 'x' });
    // The same signed address opened in another browser shows no notice.
    const elsewhere = await main.get(renamed.headers.location as string);
    expect(elsewhere.body).not.toContain('The current password is not right.');
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
    const [, signedInAt, lastUsedAt] =
      /Signed in <time datetime="([^"]+)">[^<]+ UTC<\/time> from .*, last used <time datetime="([^"]+)">/.exec(
        mine,
      )!;
    expect(Date.parse(lastUsedAt!) - Date.parse(signedInAt!)).toBeGreaterThanOrEqual(60_000);
    expect(theirs).not.toContain('this session');
    expect(theirs).toContain('<strong>Firefox on Windows</strong>');
    expect(theirs).toContain('from 203.0.113.9');
    expect(theirs).toMatch(
      /Signed in <time [^>]+>\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time> from 203\.0\.113\.9, last used <time/,
    );
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
    const response = await resultOf(
      main,
      await main.post('/account/sessions/sign-out-others', { csrf: csrfOf(account) }),
    );
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
    const wrongPage = await resultOf(main, wrong);
    const section = /<section aria-labelledby="password-title"[\s\S]*?<\/section>/.exec(wrongPage.body)![0];
    expect(section).toContain('id="error-password">The current password is not right.</p>');
    expect(section).toMatch(/id="current_password"[^>]*aria-invalid="true"[^>]*autofocus/);
    // Passwords are never put back into the page.
    expect(wrongPage.body).not.toContain('not-it');
    expect(wrongPage.body).not.toContain('a-much-better-passphrase');
    const common = await main.post('/account/password', {
      csrf,
      current_password: password,
      new_password: 'password123',
    });
    expect(locationOf(common).searchParams.get('form')).toBe('password');
    const changed = await main.post('/account/password', {
      csrf,
      current_password: password,
      new_password: 'a-much-better-passphrase',
    });
    expect(okNotice(await resultOf(main, changed))).toBe('Password changed. Signed out of 0 other sessions.');
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
    // Scopes in words, as on the consent page.
    const item = /<li data-app="web"[\s\S]*?<\/details>/.exec(account.body)![0];
    expect(item).toContain('<li>View your orders</li>');
    expect(item).toContain('<li>Keep access when you are not using the application</li>');
    // Removing asks first: the button that removes is inside a closed disclosure.
    expect(item).toMatch(/<details class="confirm">\s*<summary>Remove…<\/summary>/);
    const revoked = await resultOf(
      main,
      await main.post('/account/apps/web/revoke', { csrf: csrfOf(account) }),
    );
    expect(revoked.body).not.toContain('data-app="web"');
    const refresh = await refreshWithWebClient(app, tokens.refresh_token as string);
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
  });

  it('removes the app', async () => {
    const account = await main.get('/account');
    const id = /data-factor="([^"]+)"/.exec(account.body)![1]!;
    const removed = await resultOf(
      main,
      await main.post(`/account/totp/${id}/remove`, { csrf: csrfOf(account) }),
    );
    expect(removed.body).not.toContain('data-factor=');
    expect(okNotice(removed)).toBe('Authenticator app removed.');
    // A reload of the result is a GET of /account: no "not found", nothing removed twice.
    const reloaded = await main.get(main.lastUrl);
    expect(reloaded.body).not.toContain('was not found');
    expect(okNotice(reloaded)).toBe('Authenticator app removed.');
  });
});

describe('ending one session', () => {
  it("ends the chosen other session of the person's own, with the CSRF token", async () => {
    const mine = new TestBrowser(app);
    await signIn(mine);
    const other = new TestBrowser(app);
    await signIn(other);
    const sid = currentSid(await other.get('/account'));
    const account = await mine.get('/account');
    expect(account.body).toContain(`action="/account/sessions/${sid}/end"`);
    const refused = await mine.post(`/account/sessions/${sid}/end`, {});
    expect(refused.statusCode).toBe(403);
    const ended = await resultOf(
      mine,
      await mine.post(`/account/sessions/${sid}/end`, { csrf: csrfOf(account) }),
    );
    expect(okNotice(ended)).toBe('Signed out of that session.');
    expect(ended.body).not.toContain(`sessions-${sid}`);
    expect((await other.get('/account')).statusCode).toBe(303);
    expect((await mine.get('/account')).statusCode).toBe(200);
  });

  it("another user's session id ends nothing (and neither does this session's own)", async () => {
    const bob = new TestBrowser(app);
    await signIn(bob, BOB);
    const bobPage = await bob.get('/account');
    const bobSid = currentSid(bobPage);
    const alice = new TestBrowser(app);
    await signIn(alice);
    const account = await alice.get('/account');
    const refused = await alice.post(`/account/sessions/${bobSid}/end`, { csrf: csrfOf(account) });
    const page = await resultOf(alice, refused);
    expect(page.body).toContain(
      '<p class="alert" role="alert" id="account-notice">That session was not found.</p>',
    );
    expect((await bob.get('/account')).statusCode).toBe(200);
    const aliceSid = currentSid(account);
    await resultOf(alice, await alice.post(`/account/sessions/${aliceSid}/end`, { csrf: csrfOf(account) }));
    expect((await alice.get('/account')).statusCode).toBe(200);
  });
});

describe('finding and leaving the account page', () => {
  it('?from=<client> adds "Back to" the registered home, remembered across sign-in and forms', async () => {
    const browser = new TestBrowser(app);
    const first = await browser.get(`/account?from=${CONSENTING.clientId}`);
    expect(first.statusCode).toBe(303);
    const page = await signIn(browser, BOB);
    expect(page.body).toContain(
      '<a href="https://consenting.example.test/" data-action="back-to-app">Back to Consenting &lt;App&gt;</a>',
    );
    // Sign out ends at the client's registered post-logout URI, which the CSP lets the form reach.
    expect(page.headers['content-security-policy']).toContain(
      "form-action 'self' https://consenting.example.test",
    );
    const fields = hiddenFieldsOfForm(page.body, 'sign-out');
    expect(fields.post_logout_redirect_uri).toBe(CONSENTING.postLogoutRedirectUri);
    const signedOut = await browser.post('/logout', fields);
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe(CONSENTING.postLogoutRedirectUri);
    expect((await browser.get('/account')).statusCode).toBe(303);
  });

  it('an unknown or unregistered ?from links nowhere (no open redirect)', async () => {
    const browser = new TestBrowser(app);
    await signIn(browser, BOB);
    for (const from of ['https://evil.example/', 'no-such-client']) {
      const page = await browser.get(`/account?from=${encodeURIComponent(from)}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('data-action="back-to-app"');
      expect(page.body).not.toContain('evil.example');
    }
    // Without a client, "Sign out" still signs out, to the signed-out page.
    const page = await browser.get('/account');
    const signedOut = await browser.post('/logout', hiddenFieldsOfForm(page.body, 'sign-out'));
    expect(signedOut.statusCode).toBe(200);
    expect(signedOut.body).toContain('You have been signed out.');
    // The signed-out page leads somewhere: the start page (with its "Your account").
    expect(signedOut.body).toContain(
      '<a class="button" href="/" data-action="start-page">Go to the start page</a>',
    );
    expect((await browser.get('/account')).statusCode).toBe(303);
  });
});

/** The session id of the page's own browser. */
const currentSid = (page: LightMyRequestResponse) =>
  /<li data-session="current" id="sessions-([^"]+)"/.exec(page.body)![1]!;

/** The hidden fields of the form holding the button marked `data-action="<action>"`. */
function hiddenFieldsOfForm(body: string, action: string): Record<string, string> {
  const form = new RegExp(
    `<form[^>]*>((?:(?!</form>)[\\s\\S])*data-action="${action}"[\\s\\S]*?)</form>`,
  ).exec(body);
  expect(form).not.toBeNull();
  return hiddenFields(form![1]!);
}
