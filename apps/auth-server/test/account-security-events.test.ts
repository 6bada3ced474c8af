import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS } from '../src/audit.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { ALICE, BOB, signInSeed } from './sign-in-fixtures.js';

/**
 * The account page's "Recent security events": the person's own stored audit events, newest
 * first, a refused attempt marked as such, and never another person's.
 */

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: signInSeed() }));
});
afterAll(() => close());

async function accountPageOf(who: { username: string; password: string }) {
  const browser = new TestBrowser(app);
  const start = await browser.get('/account');
  const login = await browser.get(start.headers.location as string);
  const signedIn = await browser.post(browser.lastUrl, {
    ...hiddenFields(login.body),
    username: who.username,
    password: who.password,
  });
  expect(locationOf(signedIn).pathname).toBe('/account');
  await app.auditEventWriter.flush();
  return browser.get('/account');
}

/** The `data-security-event` values of the section, in page order. */
function listedEvents(body: string): Array<{ event: string; failure: boolean }> {
  const section = body.slice(body.indexOf('id="security-events"'));
  return [...section.matchAll(/<li data-security-event="([^"]+)"( data-failure)?>/g)].map((match) => ({
    event: match[1] as string,
    failure: match[2] !== undefined,
  }));
}

describe('account page: recent security events', () => {
  it('lists the person’s sign-in and refused attempt, newest first, and not another person’s', async () => {
    const wrong = await openLoginPage(app);
    expect(
      (await submitLogin(wrong.browser, wrong.page, ALICE.username, 'not-her-password')).statusCode,
    ).toBe(401);
    const bobs = await openLoginPage(app);
    expect((await submitLogin(bobs.browser, bobs.page, BOB.username, 'not-his-password')).statusCode).toBe(
      401,
    );

    const page = await accountPageOf(ALICE);

    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Recent security events');
    expect(listedEvents(page.body)).toEqual([
      { event: AUDIT_EVENTS.loginSucceeded, failure: false },
      { event: AUDIT_EVENTS.loginFailed, failure: true },
    ]);
    expect(page.body).toContain('Sign-in refused');
    expect(page.body).toContain('from 127.0.0.1');
  });

  it('names the application an event happened in by its registered name', async () => {
    const { browser, page } = await openLoginPage(app);
    await submitLogin(browser, page, BOB.username, BOB.password);
    const account = await accountPageOf(BOB);
    const section = account.body.slice(account.body.indexOf('id="security-events"'));
    expect(section).toContain('· Web app');
  });
});
