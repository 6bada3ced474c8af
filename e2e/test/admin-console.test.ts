/**
 * The operator console at /admin in Chromium, as the three kinds of people who reach it meet it:
 * an admin with an authenticator app (signs in with the code, finds a user, disables them after
 * the confirm step, sees the audit event), a person who is not an admin (a 403 page), and an admin
 * without a second factor (asked to set one up). Disabling from the console ends the user's orders
 * session through back-channel logout. Every state is checked with axe-core and photographed at
 * 1280 and 375 pixels under test-artifacts/screenshots/.
 */
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectNoAxeViolations } from '../src/axe.js';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
import { type StackUser, useStack } from '../src/stack.js';

const OPERATOR: StackUser = {
  sub: 'u-olga',
  username: 'olga',
  password: 'olga-console-passphrase-1',
  name: 'Olga Operator',
  email: 'olga@example.com',
};
const OPERATOR_TOTP = new Secret({ size: 20 }).base32;
const NEW_OPERATOR: StackUser = {
  sub: 'u-nina',
  username: 'nina',
  password: 'nina-console-passphrase-1',
  name: 'Nina New',
  email: 'nina@example.com',
};
/** A seed user the seed's `admins` does not name. */
const NOT_AN_ADMIN: StackUser = {
  sub: 'u-pete',
  username: 'pete',
  password: 'pete-console-passphrase-1',
  name: 'Pete Person',
  email: 'pete@example.com',
};

const browsers: TestBrowser[] = [];

const stack = useStack({
  options: () => ({
    seedExtras: {
      users: [{ ...OPERATOR, totp_secret: OPERATOR_TOTP }, NEW_OPERATOR, NOT_AN_ADMIN],
      admins: [OPERATOR.username, NEW_OPERATOR.username],
    },
  }),
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
    // Usable at 375 px: the page itself never scrolls sideways (wide tables scroll in their region).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  } finally {
    if (original) await page.setViewportSize(original);
  }
}

/** The orders app's view of its session: 200 while signed in, 401 once it ended. */
const ordersSessionStatus = async (page: Page) =>
  (await page.request.get(`${stack.ordersUrl}/bff/user`, { headers: { 'x-csrf': '1' } })).status();

describe('the operator console', () => {
  it('an admin with TOTP disables a user after confirming; the user leaves the orders app by back-channel logout', async () => {
    const shopper = await newBrowser();
    await shopper.page.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await signInWithPassword(shopper.page, stack.issuer, stack.user);
    await shopper.page.waitForURL(`${stack.ordersUrl}/app`);
    expect(await ordersSessionStatus(shopper.page)).toBe(200);

    const operator = await newBrowser();
    const { page } = operator;
    await page.goto(`${stack.issuer}/admin`);
    await signInWithPassword(page, stack.issuer, OPERATOR);
    await page.waitForURL((url) => url.pathname.endsWith('/otp'));
    await page
      .getByLabel('Code from your authenticator app')
      .fill(TOTP.generate({ secret: Secret.fromBase32(OPERATOR_TOTP) }));
    await page.keyboard.press('Enter');
    await page.waitForURL(`${stack.issuer}/admin`);
    expect(await page.locator('h1').textContent()).toBe('Operator console');
    await visit(operator, page, 'console-overview');

    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Search users').fill(stack.user.username);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/admin\/users\?q=alice/);
    await visit(operator, page, 'console-users');
    await page.locator(`[data-user="${stack.user.sub}"] a`).click();
    await page.waitForURL(`${stack.issuer}/admin/users/${stack.user.sub}`);
    expect(await page.locator('[data-status]').textContent()).toBe('enabled');
    // The shopper's provider session is listed on the user's page.
    expect(await page.locator('[data-session]').count()).toBe(1);
    await visit(operator, page, 'console-user');

    await page.locator('[data-action="disable"]').click();
    await page.waitForURL(`${stack.issuer}/admin/users/${stack.user.sub}/disable`);
    await visit(operator, page, 'console-confirm-disable');
    await page.locator('[data-action="confirm"]').click();
    await page.waitForURL(`${stack.issuer}/admin/users/${stack.user.sub}?done=disable`);
    expect(await page.locator('[data-status]').textContent()).toBe('disabled');
    expect(await page.locator('.notice').textContent()).toContain('User disabled');
    await visit(operator, page, 'console-user-disabled');

    // OIDC Back-Channel Logout: the orders app heard of it and ended its own session.
    await expect.poll(() => ordersSessionStatus(shopper.page), { timeout: 10_000 }).toBe(401);

    // The audit log, filtered to the user, shows the change with the operator as its actor (events
    // are stored in batches, so the page is read again until the batch is in).
    const auditUrl = `${stack.issuer}/admin/audit?sub=${stack.user.sub}&event=auth.admin.user_disabled`;
    const actorCell = page.locator('[data-event="auth.admin.user_disabled"] [data-actor]');
    await expect
      .poll(
        async () => {
          await page.goto(auditUrl);
          return (await actorCell.count()) === 1 ? actorCell.textContent() : null;
        },
        { timeout: 10_000 },
      )
      .toBe(OPERATOR.sub);
    await visit(operator, page, 'console-audit');

    for (const section of ['Overview', 'Sessions', 'Clients', 'Signing keys', 'Seed plan']) {
      await page.getByRole('link', { name: section, exact: true }).click();
      await page.waitForLoadState();
      await visit(operator, page, `console-${section.toLowerCase().replace(' ', '-')}`);
    }
    expect(operator.cspViolations).toEqual([]);
  });

  it('answers a signed-in person who is not an admin with a 403 page', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    const response = await page.goto(`${stack.issuer}/admin`);
    expect(response?.ok()).toBe(true);
    await expectLoginPage(page, stack.issuer);
    await signInWithPassword(page, stack.issuer, NOT_AN_ADMIN);
    await page.waitForURL(`${stack.issuer}/admin`);
    expect(await page.locator('h1').textContent()).toBe('Not an operator');
    const reload = await page.reload();
    expect(reload?.status()).toBe(403);
    await visit(browser, page, 'console-forbidden');
  });

  it('asks an admin without a second factor to set one up before the console', async () => {
    const browser = await newBrowser();
    const { page } = browser;
    await page.goto(`${stack.issuer}/admin`);
    await signInWithPassword(page, stack.issuer, NEW_OPERATOR);
    await page.waitForURL((url) => url.pathname.endsWith('/enrol'));
    expect(await page.locator('h1').textContent()).toBe('Set up an authenticator app');
    await visit(browser, page, 'console-enrol-first');
    await page.goto(`${stack.issuer}/admin/users`);
    await page.waitForURL((url) => url.pathname.endsWith('/enrol'));
  });
});
