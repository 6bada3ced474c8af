/**
 * The account page and the small dead ends, in Chromium as a person meets them: finding and
 * leaving the account page (from the orders app, the SPA and the start page), ending one session,
 * Back after signing in, forms that answer at a GET address with errors in place, and the small
 * page fixes. Every page state is checked with axe-core and photographed at 1280 and 375 pixels
 * under test-artifacts/screenshots/.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectNoAxeViolations } from '../src/axe.js';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
import { useStack } from '../src/stack.js';

const browsers: TestBrowser[] = [];

/** The dev mailbox of this suite's auth server (development without SMTP_URL keeps mails there). */
const mailDirectory = mkdtempSync(join(tmpdir(), 'account-pages-mail-'));

const stack = useStack({
  options: () => ({ authEnv: { MAIL_DEV_DIR: mailDirectory } }),
  afterEachTest: async () => {
    for (const browser of browsers.splice(0)) await browser.close();
  },
});

async function newBrowser(): Promise<TestBrowser> {
  const browser = await launchBrowser();
  browsers.push(browser);
  return browser;
}

/** axe-core on the page as it is, then screenshots at 1280 and 375 pixels. */
async function visit(browser: TestBrowser, page: Page, name: string): Promise<void> {
  await expectNoAxeViolations(page, name);
  const original = page.viewportSize();
  try {
    await page.setViewportSize({ width: 1280, height: 800 });
    await browser.screenshot(page, name);
    await page.setViewportSize({ width: 375, height: 720 });
    await browser.screenshot(page, `${name}-375`);
  } finally {
    if (original) await page.setViewportSize(original);
  }
}

/** The login page, checked with axe-core like every other state, then the password sign-in. */
async function signIn(page: Page): Promise<void> {
  await expectLoginPage(page, stack.issuer);
  await expectNoAxeViolations(page, 'login page');
  await signInWithPassword(page, stack.issuer, stack.user);
}

/** Counts the POST requests a page sends (a reload of a result page must send none). */
function countPosts(page: Page): { count: number } {
  const posts = { count: 0 };
  page.on('request', (request) => {
    if (request.method() === 'POST') posts.count += 1;
  });
  return posts;
}

/** A code of a time step not used before (a code counts once per step). */
async function freshCode(secret: string, after: number): Promise<{ code: string; step: number }> {
  for (;;) {
    const step = Math.floor(Date.now() / 30_000);
    if (step > after) return { code: TOTP.generate({ secret: Secret.fromBase32(secret) }), step };
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

describe('finding and leaving the account page', () => {
  it('orders app: "Your account" next to the name, "Back to Orders", "Sign out" ends at the app', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    await page.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await signIn(page);
    await page.waitForURL(`${stack.ordersUrl}/app`);
    const link = page.getByRole('link', { name: 'Your account' });
    await link.waitFor();
    // Next to the signed-in name, in the same bar.
    const name = await page.locator('#user-name').boundingBox();
    const box = await link.boundingBox();
    expect(Math.abs(name!.y + name!.height / 2 - (box!.y + box!.height / 2))).toBeLessThan(24);
    await visit(browser, page, 'orders-app-your-account');

    await link.click();
    await page.waitForURL(`${stack.issuer}/account?from=orders-web`);
    expect(await page.locator('h1').textContent()).toBe('Your account');
    // Scopes in words and times with their zone.
    const access = page.locator('[data-app="orders-web"]');
    expect(await access.textContent()).toContain('View your orders');
    expect(await page.locator('[data-session="current"] time').first().textContent()).toMatch(/ UTC$/);
    await visit(browser, page, 'account-from-orders');

    await page.getByRole('link', { name: 'Back to Orders' }).click();
    await page.waitForURL(`${stack.ordersUrl}/app`);

    await page.getByRole('link', { name: 'Your account' }).click();
    await page.waitForURL(/\/account\?from=orders-web$/);
    await page.locator('[data-action="sign-out"]').click();
    await page.waitForURL(`${stack.ordersUrl}/signed-out`);
    await visit(browser, page, 'orders-signed-out-from-account');
    // The provider's session ended: the account page asks to sign in again.
    await page.goto(`${stack.issuer}/account`);
    await expectLoginPage(page, stack.issuer);
    expect(browser.cspViolations).toEqual([]);
  });

  it('the SPA and the start page link to the account page; the SPA comes back', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    await page.goto(`${stack.issuer}/`);
    await visit(browser, page, 'issuer-home-your-account');
    await page.getByRole('link', { name: 'Your account' }).click();
    await signIn(page);
    await page.waitForURL(`${stack.issuer}/account`);
    // Without an application to return to, no "Back to" link, and still a "Sign out".
    expect(await page.locator('[data-action="back-to-app"]').count()).toBe(0);
    expect(await page.locator('[data-action="sign-out"]').count()).toBe(1);

    await page.goto(`${stack.spaUrl}/`);
    await page.locator('#signed-out').waitFor();
    await expectNoAxeViolations(page, 'SPA signed out');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.spaUrl}/`);
    await page.locator('#signed-in').waitFor();
    await visit(browser, page, 'spa-your-account');
    await page.getByRole('link', { name: 'Your account' }).click();
    await page.waitForURL(`${stack.issuer}/account?from=orders-spa`);
    await page.getByRole('link', { name: 'Back to Orders SPA' }).click();
    await page.waitForURL(`${stack.spaUrl}/`);

    // The SPA's 404 is a page like the others, with a way back.
    const missing = await page.goto(`${stack.spaUrl}/no-such-page`);
    expect(missing?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Page not found');
    await visit(browser, page, 'spa-not-found');
    await page.getByRole('link', { name: 'Go to the Orders SPA' }).click();
    await page.waitForURL(`${stack.spaUrl}/`);
  });
});

describe('sessions, Back, and the small dead ends', () => {
  it('ends one other session from the list; that browser is signed out, this one is not', async () => {
    const first = await newBrowser();
    const second = await newBrowser();
    for (const { page } of [first, second]) {
      await page.goto(`${stack.issuer}/account`);
      await signIn(page);
      await page.waitForURL(`${stack.issuer}/account`);
    }
    const page = first.page;
    await page.reload();
    const others = page.locator('[data-session]:not([data-session="current"])');
    const before = await others.count();
    expect(before).toBeGreaterThanOrEqual(1);
    await visit(first, page, 'account-sessions');
    // The newest other session is the second browser's.
    await others
      .last()
      .getByRole('button', { name: /^Sign out/ })
      .click();
    await page.waitForURL(/\/account\?result=ok/);
    expect(await page.locator('#account-notice').textContent()).toBe('Signed out of that session.');
    expect(await others.count()).toBe(before - 1);
    await visit(first, page, 'account-session-ended');
    await second.page.goto(`${stack.issuer}/account`);
    await expectLoginPage(second.page, stack.issuer);
  });

  it('Back to the login page after signing in goes on to the app; an expired page links on', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    await page.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await expectLoginPage(page, stack.issuer);
    const loginUrl = page.url();
    await signIn(page);
    await page.waitForURL(`${stack.ordersUrl}/app`);
    await page.goBack();
    await page.goBack();
    await page.waitForLoadState();
    // Wherever Back landed (the login page is gone), the browser ends at the app, not an error.
    await page.goto(loginUrl);
    await page.waitForURL(`${stack.ordersUrl}/app`);

    // A browser that is not signed in, on the code step of a finished sign-in: a way on.
    const other = await newBrowser();
    const otpUrl = loginUrl.replace(/\/login\?/, '/otp?');
    const response = await other.page.goto(otpUrl);
    expect(response?.status()).toBe(400);
    expect(await other.page.locator('h1').textContent()).toBe('This sign-in request has expired');
    await visit(other, other.page, 'otp-expired');
    await other.page.getByRole('link', { name: 'Back to Orders' }).click();
    await other.page.waitForURL((url) => url.href.startsWith(`${stack.issuer}/interaction/`));
  });

  it('lockout warning, CSRF page and signed-out page each say one useful thing', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    await page.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await expectLoginPage(page, stack.issuer);
    // An unknown username counts like a known one (nothing to learn from the warning).
    let message = '';
    for (let attempt = 0; attempt < 4; attempt++) {
      await page.getByLabel('Username').fill('nobody-here');
      await page.getByLabel('Password').fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('#login-error').waitFor();
      message = (await page.locator('#login-error').textContent()) ?? '';
    }
    expect(message).toBe('Invalid username or password. 1 attempt left before a 15-minute lock.');
    await visit(browser, page, 'login-last-attempt-warning');

    // A form whose token no longer verifies: one instruction, not two.
    await page.locator('input[name="csrf"]').evaluate((input) => {
      (input as HTMLInputElement).value = 'stale';
    });
    await page.getByLabel('Username').fill(stack.user.username);
    await page.getByLabel('Password').fill(stack.user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('h1', { hasText: 'This form has expired' }).waitFor();
    expect(await page.locator('main p').allTextContents()).toEqual([
      'The form could not be verified: it was open too long, or came from another browser.',
      'Error code: csrf_token_invalid',
      'Go back, reload the page, and send the form again.',
    ]);
    await visit(browser, page, 'form-expired');

    // The signed-out page (sign-out without an application) links to the start page.
    await page.goto(`${stack.issuer}/account`);
    await signIn(page);
    await page.waitForURL(`${stack.issuer}/account`);
    await page.locator('[data-action="sign-out"]').click();
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor();
    await visit(browser, page, 'signed-out');
    await page.getByRole('link', { name: 'Go to the start page' }).click();
    await page.waitForURL(`${stack.issuer}/`);
  });
});

describe('account forms: post/redirect/get, errors in place, Remove asks first', () => {
  it('renames, refuses, removes an authenticator app; reload sends nothing again', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    const posts = countPosts(page);
    await page.goto(`${stack.issuer}/account`);
    await signIn(page);
    await page.waitForURL(`${stack.issuer}/account`);

    // Enrol an app (its code proves it), then the recovery codes with copy and download.
    await page.getByRole('button', { name: 'Add an authenticator app' }).click();
    await page.locator('h1', { hasText: 'Set up an authenticator app' }).waitFor();
    await expectNoAxeViolations(page, 'authenticator app enrolment');
    const secret = (await page.locator('[data-totp-secret]').getAttribute('data-totp-secret'))!;
    let used = Math.floor(Date.now() / 30_000) - 1;
    const first = await freshCode(secret, used);
    used = first.step;
    await page.getByLabel('Code from your authenticator app').fill(first.code);
    await page.keyboard.press('Enter');
    await page.locator('h1', { hasText: 'Your recovery codes' }).waitFor();
    const codes = await page
      .locator('[data-recovery-code]')
      .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-recovery-code')!));
    expect(codes).toHaveLength(10);
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.issuer });
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.locator('#recovery-codes-status').textContent()).toContain('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${codes.join('\n')}\n`);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download' }).click();
    expect((await download).suggestedFilename()).toBe('recovery-codes.txt');
    await visit(browser, page, 'recovery-codes-shown');
    await page.getByRole('button', { name: 'I have saved them, continue' }).click();
    await page.waitForURL(`${stack.issuer}/account`);
    const item = page.locator('[data-factor]');

    // Another browser signs in to the orders app with a recovery code: the page states the format
    // and links back to the code page; afterwards it says how many codes are left.
    const other = await newBrowser();
    const second = other.page;
    await second.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await signIn(second);
    await second.waitForURL((url) => url.pathname.endsWith('/otp'));
    await expectNoAxeViolations(second, 'code page');
    await second.getByRole('link', { name: 'Use a recovery code instead' }).click();
    await second.waitForURL((url) => url.pathname.endsWith('/recovery'));
    expect(await second.locator('#recovery-format').textContent()).toContain('ABCDE-23456');
    await visit(other, second, 'recovery-code-page');
    await second.getByRole('link', { name: 'Use the code from your authenticator app instead' }).click();
    await second.waitForURL((url) => url.pathname.endsWith('/otp'));
    await second.goBack();
    await second.getByRole('textbox', { name: 'Recovery code' }).fill(codes[0]!);
    await second.getByRole('button', { name: 'Verify' }).click();
    await second.locator('h1', { hasText: 'Recovery code accepted' }).waitFor();
    expect(await second.locator('#recovery-left').textContent()).toBe('9 recovery codes left');
    await visit(other, second, 'recovery-code-used');
    await second.getByRole('link', { name: 'Continue' }).click();
    await second.waitForURL(`${stack.ordersUrl}/app`);
    await page.reload();
    expect(await page.locator('#recovery-remaining').textContent()).toBe('9');

    // A refused rename: the error inside that form, on its field, focused; the typed text kept.
    await item.getByLabel('Name').fill('   ');
    await item.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL(/\/account\?result=error/);
    expect(await item.locator('[role="alert"]').textContent()).toBe('That app could not be renamed.');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-invalid'))).toBe('true');
    expect(await item.getByLabel('Name').inputValue()).toBe('   ');
    await visit(browser, page, 'account-rename-error');

    await item.getByLabel('Name').fill('Phone');
    await item.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL(/\/account\?result=ok/);
    const notice = page.locator('#account-notice');
    expect(await notice.textContent()).toBe('Renamed.');
    // A confirmation is as visible as an error: a coloured box, not plain text.
    const background = await notice.evaluate((element) => getComputedStyle(element).backgroundColor);
    expect(background).not.toBe('rgba(0, 0, 0, 0)');
    await visit(browser, page, 'account-renamed');

    // A wrong current password: the error in the password form, focus on its first field.
    await page.getByLabel('Current password').fill('not-the-password');
    await page.getByLabel('New password', { exact: true }).fill('a-much-better-passphrase');
    await page.getByLabel('New password again').fill('a-much-better-passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL(/\/account\?result=error.*form=password/);
    expect(await page.locator('#password [role="alert"]').count()).toBe(1);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('current_password');
    expect(await page.getByLabel('Current password').inputValue()).toBe('');
    await visit(browser, page, 'account-password-error');

    // Remove asks first (no script needed): the disclosure opens the question.
    await item.locator('summary').click();
    const confirm = item.getByRole('button', { name: 'Yes, remove Phone' });
    expect(await confirm.isVisible()).toBe(true);
    await visit(browser, page, 'account-remove-confirm');
    await confirm.click();
    await page.waitForURL(/\/account\?result=ok/);
    expect(await notice.textContent()).toBe('Authenticator app removed.');
    const before = posts.count;
    await page.reload();
    expect(posts.count).toBe(before);
    expect(await notice.textContent()).toBe('Authenticator app removed.');
    expect(await page.locator('body').textContent()).not.toContain('was not found');
    await visit(browser, page, 'account-removed-reloaded');
    expect(browser.cspViolations).toEqual([]);
  });
});

/** The height of the element `selector` names, as laid out. */
async function heightOf(page: Page, selector: string): Promise<number> {
  const box = await page.locator(selector).boundingBox();
  expect(box, selector).not.toBeNull();
  return box!.height;
}

/** How far the page scrolls sideways at a phone's 375 pixels (0: it does not). */
async function sidewaysScrollAt375(page: Page): Promise<number> {
  const original = page.viewportSize();
  await page.setViewportSize({ width: 375, height: 720 });
  try {
    return await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
  } finally {
    if (original) await page.setViewportSize(original);
  }
}

describe('the address and its mailed link', () => {
  it('e-mail field as tall as the others, the change warning, the dev mailbox at 375 px, and a way on after verifying', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    await page.goto(`${stack.issuer}/account`);
    await signIn(page);
    await page.waitForURL(`${stack.issuer}/account`);
    // Styled as the other fields (it was the browser's bare 21-pixel box).
    expect(await heightOf(page, '#new_email')).toBe(await heightOf(page, '#current_password'));
    expect(await page.locator('[data-email-change="help"]').textContent()).toContain(
      'an order history, for example, no longer shows the orders placed under this address',
    );
    await visit(browser, page, 'account-address-form');

    await page.getByRole('button', { name: 'Send a verification link' }).click();
    await page.locator('#account-notice').waitFor();
    await page.goto(`${stack.issuer}/dev/mailbox`);
    await visit(browser, page, 'dev-mailbox');
    await page
      .getByRole('link', { name: /^Confirm your address/ })
      .first()
      .click();
    await page.locator('.mail-text').waitFor();
    // The mailed link is one long word: it wraps instead of widening the page.
    expect(await sidewaysScrollAt375(page)).toBe(0);
    await visit(browser, page, 'dev-mailbox-mail');

    await page.locator('.mail-text a').first().click();
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Address verified');
    await visit(browser, page, 'address-verified');
    await page.locator('[data-action="account"]').click();
    await page.waitForURL(`${stack.issuer}/account`);
    expect(await page.locator('[data-email-verified]').getAttribute('data-email-verified')).toBe('true');
    expect(browser.cspViolations).toEqual([]);
  });
});
