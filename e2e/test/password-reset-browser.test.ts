/**
 * Forgot password in Chromium, the mail read from a real SMTP server (the npm `smtp-server` on a
 * loopback port, the auth server's test fixture): the login page's link, the address, the mailed
 * link, the reset page, then the old password refused, the new one signing in and the notice
 * received. Screenshots of the new pages and of the mail rendered as HTML go to
 * test-artifacts/screenshots.
 */

import { type SmtpFixture, startSmtpServer, urlsIn } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
import { expectAccessiblePage } from '../src/page-checks.js';
import { useStack } from '../src/stack.js';

let smtp: SmtpFixture;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});
const stack = useStack({
  options: () => ({ authEnv: { SMTP_URL: smtp.url, MAIL_FROM: 'accounts@localhost' } }),
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});

describe('forgot password, through the mail', () => {
  it('resets the password from the login page link and signs in with the new one', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const issuerName = new URL(stack.issuer).host;
    await page.goto(`${stack.issuer}/account`);
    await expectLoginPage(page, stack.issuer);
    const usernameBox = await page.getByLabel('Username').boundingBox();
    await page.locator('[data-action="forgot-password"]').click();

    await expect.poll(() => page.locator('h1').textContent()).toBe('Forgot your password?');
    // The address field is styled as the login page's fields (not the browser's bare small box).
    expect((await page.getByLabel('E-mail address').boundingBox())?.height).toBe(usernameBox?.height);
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'forgot-password');
    await page.getByLabel('E-mail address').fill(stack.user.email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Check your mail');
    await expectAccessiblePage(page, { stylesheets: 1 });

    const mail = await smtp.nextMailTo(stack.user.email, {
      subject: `Reset your password for ${issuerName}`,
    });
    const links = urlsIn(mail.parsed.text);
    expect(links).toHaveLength(1);
    expect(new URL(links[0]!).origin).toBe(stack.issuer);
    const mailView = await browser.context.newPage();
    await mailView.setContent(String(mail.parsed.html));
    await browser.screenshot(mailView, 'password-reset-mail');
    await mailView.close();

    await page.goto(links[0]!);
    expect(await page.locator('h1').textContent()).toBe('Choose a new password');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'reset-password');
    const newPassword = 'a-new-password-from-the-mail';
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('New password again').fill(newPassword);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Password changed');
    await expectAccessiblePage(page, { stylesheets: 1 });

    await page.goto(`${stack.issuer}/account`);
    await signInWithPassword(page, stack.issuer, stack.user);
    await expect.poll(() => page.locator('[role="alert"]:visible').count()).toBe(1);
    expect(new URL(page.url()).pathname).toMatch(/\/login$/);
    await signInWithPassword(page, stack.issuer, { ...stack.user, password: newPassword });
    await page.waitForURL(`${stack.issuer}/account`);

    const notice = await smtp.nextMailTo(stack.user.email, {
      subject: `Your password for ${issuerName} was changed`,
    });
    expect(notice.parsed.text).toContain('If this was not you');
    expect(browser.cspViolations).toEqual([]);
  });
});
