/**
 * Multi-factor pages in Chromium, driven by keyboard only: the demo user signs in to the account
 * page, enrols an authenticator app (reading the secret from the page), saves the recovery codes,
 * then signs in to the orders application with password and a computed code. Screenshots of each
 * new page go to test-artifacts/screenshots.
 */
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { signInWithPassword } from '../src/flows.js';
import { expectAccessiblePage } from '../src/page-checks.js';
import { useStack } from '../src/stack.js';

let browser: TestBrowser | undefined;

const stack = useStack({
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});

/** Tabs until the focused element's text or label is `name`, then presses Enter (keyboard only). */
async function activateByKeyboard(page: Page, name: string) {
  for (let step = 0; step < 40; step++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    if (focused === name) {
      await page.keyboard.press('Enter');
      return;
    }
  }
  throw new Error(`no focusable "${name}"`);
}

/** A code of the next time step, so it was never used before (a code counts once per step). */
async function freshCode(secret: string, after: number): Promise<{ code: string; step: number }> {
  for (;;) {
    const step = Math.floor(Date.now() / 30_000);
    if (step > after) return { code: TOTP.generate({ secret: Secret.fromBase32(secret) }), step };
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

describe('authenticator app and account page', () => {
  it('enrols an app on the account page and signs in to the orders app with it', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(`${stack.issuer}/account`);
    await signInWithPassword(page, stack.issuer, stack.user);
    await page.waitForURL(`${stack.issuer}/account`);
    expect(await page.locator('h1').textContent()).toBe('Your account');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'account');

    await activateByKeyboard(page, 'Add an authenticator app');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Set up an authenticator app');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'enrol-authenticator-app');
    const secret = (await page.locator('[data-totp-secret]').getAttribute('data-totp-secret'))!;
    let used = Math.floor(Date.now() / 30_000) - 1;
    const first = await freshCode(secret, used);
    used = first.step;
    // The code field has the focus (autofocus): type and submit without the mouse.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('otp');
    await page.keyboard.type(first.code);
    await page.keyboard.press('Enter');

    await expect.poll(() => page.locator('h1').textContent()).toBe('Your recovery codes');
    expect(await page.locator('[data-recovery-code]').count()).toBe(10);
    await browser.screenshot(page, 'recovery-codes');
    await activateByKeyboard(page, 'I have saved them, continue');
    await page.waitForURL(`${stack.issuer}/account`);
    expect(await page.locator('[data-factor]').count()).toBe(1);

    // A new browser: the orders app's sign-in now asks for the app after the password.
    await browser.close();
    browser = await launchBrowser();
    const second = browser.page;
    await second.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await signInWithPassword(second, stack.issuer, stack.user);
    await second.waitForURL((url) => url.pathname.endsWith('/otp'));
    await expectAccessiblePage(second, { stylesheets: 1 });
    await second.getByLabel('Code from your authenticator app').fill('000000');
    await second.keyboard.press('Enter');
    await expect.poll(() => second.locator('[role="alert"]').count()).toBe(1);
    await browser.screenshot(second, 'otp-wrong-code');
    const next = await freshCode(secret, used);
    await second.getByLabel('Code from your authenticator app').fill(next.code);
    await second.keyboard.press('Enter');
    await second.waitForURL(`${stack.ordersUrl}/app`);
    expect(browser.cspViolations).toEqual([]);

    // The recovery-code page is linked from the otp form.
    await browser.close();
    browser = await launchBrowser();
    const third = browser.page;
    await third.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await signInWithPassword(third, stack.issuer, stack.user);
    await third.waitForURL((url) => url.pathname.endsWith('/otp'));
    await browser.screenshot(third, 'otp');
    await third.getByRole('link', { name: 'Use a recovery code instead' }).click();
    await third.waitForURL((url) => url.pathname.endsWith('/recovery'));
    await expectAccessiblePage(third, { stylesheets: 1 });
    await browser.screenshot(third, 'recovery-code');
  });
});
