import { createTestClock } from '@oidc-orders/oauth-core/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { REPORTS_API, TEST_SECRETS } from './helpers/seed.js';
import { ALICE, signInSeed } from './sign-in-fixtures.js';

/**
 * The account page's password change (README "Account page", "Security and operations"): it is no
 * password oracle for whoever holds a signed-in browser (the new password is checked first; wrong
 * current passwords count on the login form's per-user lock, shared by every instance through the
 * database), and a change signs the user out of every other session and token. Two instances on
 * one database; the back-channel logout it sends is followed to the orders app in
 * apps/orders/test/account-lifecycle.e2e.test.ts.
 */

const clock = createTestClock(1_800_000_000);
let database: TestDatabase;
let first: Awaited<ReturnType<typeof startTestApp>>;
let second: Awaited<ReturnType<typeof startTestApp>>;
let password: string = ALICE.password;
const env = { LOGIN_MAX_FAILURES_PER_USERNAME: '3', LOGIN_MAX_FAILURES_PER_IP: '1000' };

beforeAll(async () => {
  database = await createTestDatabase();
  first = await startTestApp({ database, seed: signInSeed(), clock, env });
  second = await startTestApp({ database, seed: signInSeed(), clock, env });
});
afterAll(async () => {
  await first?.close();
  await second?.close();
  await database?.drop();
});

/** A browser signed in to /account with Alice's password, on `app`. */
async function signedIn(app: FastifyInstance): Promise<TestBrowser> {
  const browser = new TestBrowser(app);
  const start = await browser.get('/account');
  const page = await browser.get(start.headers.location as string);
  const response = await browser.post(browser.lastUrl, {
    ...hiddenFields(page.body),
    username: ALICE.username,
    password,
  });
  expect(locationOf(response).pathname).toBe('/account');
  return browser;
}

/** The same browser (its cookies) talking to another instance. */
function onInstance(browser: TestBrowser, app: FastifyInstance): TestBrowser {
  const moved = new TestBrowser(app);
  for (const [name, value] of browser.cookies) moved.cookies.set(name, value);
  return moved;
}

/** A password change's answer: the POST's status and the page it shows. */
interface Answer {
  statusCode: number;
  headers: LightMyRequestResponse['headers'];
  page: LightMyRequestResponse;
}

/**
 * Sends the password form. Post/redirect/get: a result answers 303 to a GET address of /account
 * tied to the password form, followed here to read its page; a lockout answers 429 itself.
 */
async function changePassword(browser: TestBrowser, fields: Record<string, string>): Promise<Answer> {
  const csrf = hiddenFields((await browser.get('/account')).body).csrf!;
  const response = await browser.post('/account/password', { csrf, ...fields });
  if (response.statusCode !== 303)
    return { statusCode: response.statusCode, headers: response.headers, page: response };
  expect(response.headers['cache-control']).toBe('no-store');
  const location = locationOf(response);
  expect(location.pathname).toBe('/account');
  expect(location.searchParams.get('form')).toBe('password');
  const page = await browser.get(response.headers.location as string);
  expect(page.statusCode).toBe(200);
  return { statusCode: response.statusCode, headers: response.headers, page };
}

/** The words of the answer: the page's notice, or the error shown inside the password form. */
const noticeOf = (answer: Answer) =>
  /id="(?:account-notice|error-password)">([^<]*)</.exec(answer.page.body)?.[1] ?? null;

const introspect = async (token: string) =>
  (
    await first.app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi) },
      payload: form({ token }),
    })
  ).json();

describe('password change: no oracle for whoever holds the session', () => {
  let main: TestBrowser;
  beforeAll(async () => {
    main = await signedIn(first.app);
  });

  it('refuses a bad new password with the same answer whether the current password is right or not', async () => {
    // The form asks for the new password twice.
    expect((await main.get('/account')).body).toContain('name="confirm_password"');
    for (const [newPassword, confirm] of [
      ['short', 'short'],
      ['password123', 'password123'],
      ['a-much-better-passphrase', 'a-different-passphrase'],
    ] as const) {
      const answers = [];
      for (const current of ['not-the-password', password]) {
        answers.push(
          await changePassword(main, {
            current_password: current,
            new_password: newPassword,
            confirm_password: confirm,
          }),
        );
      }
      const [wrongCurrent, rightCurrent] = answers;
      expect(wrongCurrent!.statusCode).toBe(303);
      expect(rightCurrent!.statusCode).toBe(303);
      expect(noticeOf(wrongCurrent!)).toBe(noticeOf(rightCurrent!));
      expect(noticeOf(wrongCurrent!)).not.toMatch(/current password/i);
    }
    // Those attempts compared no current password, so none counted towards the lock.
    const wrong = await changePassword(main, {
      current_password: 'not-the-password',
      new_password: 'a-much-better-passphrase',
      confirm_password: 'a-much-better-passphrase',
    });
    expect(wrong.statusCode).toBe(303);
    expect(noticeOf(wrong)).toBe('The current password is not right.');
  });

  it('counts wrong current passwords on the login form’s per-user lock, on every instance: then 429 even for the right one', async () => {
    // One failure already (above); one more on the account page of the other instance, and one
    // at the login form: three, the limit.
    const elsewhere = onInstance(main, second.app);
    const guess = await changePassword(elsewhere, {
      current_password: 'another-guess',
      new_password: 'a-much-better-passphrase',
    });
    expect(guess.statusCode).toBe(303);
    expect(noticeOf(guess)).toBe('The current password is not right.');
    const login = await openLoginPage(first.app);
    expect((await submitLogin(login.browser, login.page, ALICE.username, 'wrong')).statusCode).toBe(401);

    const locked = await changePassword(elsewhere, {
      current_password: password,
      new_password: 'a-much-better-passphrase',
      confirm_password: 'a-much-better-passphrase',
    });
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBe('900');
    expect(noticeOf(locked)).toBe('Too many failed sign-in attempts. Please try again in 15 minutes.');
    // The lock is the login form's: it refuses Alice's right password too, and nothing changed.
    const again = await openLoginPage(second.app);
    const refused = await submitLogin(again.browser, again.page, ALICE.username, ALICE.password);
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('Please try again in 15 minutes.');

    clock.advance(901);
    const after = await openLoginPage(second.app);
    expect((await submitLogin(after.browser, after.page, ALICE.username, password)).statusCode).toBe(303);
  });
});

describe('password change: every other session and token ends', () => {
  // Each test starts with Alice signed out everywhere, so the counts on the page are its own.
  beforeEach(async () => {
    await first.app.userSignOut.endUserSessions(ALICE.sub);
  });

  it('ends the other sessions, the refresh and opaque access tokens; this browser stays and is told how many', async () => {
    const main = await signedIn(first.app);
    const others = [await signedIn(first.app), await signedIn(second.app)];
    const tokens = await webClientTokens(first.app, 'openid offline_access reports.read');
    expect((await introspect(String(tokens.access_token))).active).toBe(true);

    const changed = await changePassword(main, {
      current_password: password,
      new_password: 'a-much-better-passphrase',
      confirm_password: 'a-much-better-passphrase',
    });
    expect(changed.statusCode).toBe(303);
    expect(noticeOf(changed)).toBe('Password changed. Signed out of 2 other sessions.');
    password = 'a-much-better-passphrase';

    expect((await main.get('/account')).statusCode).toBe(200);
    expect((await onInstance(main, second.app).get('/account')).statusCode).toBe(200);
    for (const other of others) {
      const page = await other.get('/account');
      expect(page.statusCode).toBe(303);
      expect(locationOf(page).pathname).toMatch(/\/login$/);
    }
    const refresh = await refreshWithWebClient(second.app, String(tokens.refresh_token));
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    expect(await introspect(String(tokens.access_token))).toEqual({ active: false });

    // The new password signs in, the old one not.
    const old = await openLoginPage(second.app);
    expect((await submitLogin(old.browser, old.page, ALICE.username, ALICE.password)).statusCode).toBe(401);
    await signedIn(second.app);
  });

  it('says "1 other session" for one', async () => {
    const main = await signedIn(first.app);
    await signedIn(second.app);
    const changed = await changePassword(main, {
      current_password: password,
      new_password: 'yet-another-passphrase',
      confirm_password: 'yet-another-passphrase',
    });
    expect(noticeOf(changed)).toBe('Password changed. Signed out of 1 other session.');
    password = 'yet-another-passphrase';
  });
});
