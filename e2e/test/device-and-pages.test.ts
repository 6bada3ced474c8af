/**
 * The authorization server's pages in Chromium: the device flow approved in the browser for the
 * real `orders` CLI, then the error and signed-out pages, a failed login, and each page's
 * accessibility basics, security headers and phone-width layout.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
import { expectAccessiblePage } from '../src/page-checks.js';
import { startNodeProcess } from '../src/processes.js';
import { useStack } from '../src/stack.js';

const USER_CODE = /enter the code:\s+([A-Z]{4}-[A-Z]{4})/;
const VERIFICATION_URI = /open this page in a browser on any device:\s+(\S+)/;

let browser: TestBrowser | undefined;
let configDir: string;

afterAll(async () => {
  if (configDir) await rm(configDir, { recursive: true, force: true });
});
const stack = useStack({
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});
beforeAll(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'e2e-orders-cli-'));
});

describe('device flow', () => {
  it("approves the CLI's user code in the browser, and the CLI signs in", async () => {
    const cli = startNodeProcess(
      'orders login',
      'packages/cli',
      'src/main.ts',
      {
        ORDERS_ISSUER: stack.issuer,
        ORDERS_CLIENT_ID: 'orders-cli',
        ORDERS_API_URL: `${stack.ordersUrl}/orders`,
        ORDERS_CLI_CONFIG_DIR: join(configDir, 'orders-cli'),
      },
      ['login', '--no-qr'],
    );
    try {
      const [, userCode] = await cli.waitForOutput(USER_CODE);
      const [, verificationUri] = await cli.waitForOutput(VERIFICATION_URI);
      expect(verificationUri).toBe(`${stack.issuer}/device`);

      browser = await launchBrowser();
      const { page } = browser;
      await page.goto(verificationUri!);
      expect(await page.locator('h1').textContent()).toBe('Connect a device');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('user_code');
      await expectAccessiblePage(page, { stylesheets: 1 });
      await page.keyboard.type(userCode!);
      await browser.screenshot(page, 'device-verification');
      await page.keyboard.press('Enter');

      await signInWithPassword(page, stack.issuer, stack.user);
      // The device flow always asks (RFC 8628 §5.4: the person confirms what they are connecting).
      await page.waitForURL((url) => url.pathname.endsWith('/consent'));
      expect(await page.locator('h1').textContent()).toBe('Allow Orders CLI access?');
      await expectAccessiblePage(page, { stylesheets: 1 });
      await browser.screenshot(page, 'device-consent');
      await page.getByRole('button', { name: 'Allow' }).click();

      await expect.poll(() => page.locator('h1').textContent()).toBe('Device connected');
      await expectAccessiblePage(page, { stylesheets: 1 });
      await browser.screenshot(page, 'device-connected');

      expect(await cli.exited).toBe(0);
      expect(cli.output()).toContain(`Signed in as ${stack.user.name} <${stack.user.email}>.`);
      expect(browser.cspViolations).toEqual([]);
    } finally {
      await cli.stop();
    }
  });
});

describe('sign-in pages', () => {
  it('says why a login failed, keeps the username, and moves the focus to the password', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(`${stack.ordersUrl}/app`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await expectLoginPage(page, stack.issuer);
    await page.getByLabel('Username').fill(stack.user.username);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toBe('Invalid username or password.');
    expect(await page.locator('form').getAttribute('aria-describedby')).toBe('login-error');
    expect(await page.getByLabel('Username').inputValue()).toBe(stack.user.username);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'login-failed');

    // The focus is visible (a keyboard user sees where they are): the button's outline on Tab.
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => {
      const focused = document.activeElement as HTMLElement;
      const style = getComputedStyle(focused);
      return { text: focused.textContent, style: style.outlineStyle, width: style.outlineWidth };
    });
    expect(outline).toEqual({ text: 'Sign in', style: 'solid', width: '3px' });

    await page.keyboard.type('');
    await page.getByLabel('Password').fill(stack.user.password);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL(`${stack.ordersUrl}/app`);
    expect(browser.cspViolations).toEqual([]);
  });

  it('shows an error page, not a redirect, for an unknown client, with strict security headers', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const response = await page.goto(
      `${stack.issuer}/authorize?client_id=nobody&response_type=code&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    );
    expect(response?.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(stack.issuer);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toBe('no-store');
    expect(await page.locator('h1').textContent()).toBeTruthy();
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'error');
    expect(browser.cspViolations).toEqual([]);
  });

  it('shows the signed-out page after a logout without a redirect', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(`${stack.issuer}/logout`);
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'signed-out');
    expect(browser.cspViolations).toEqual([]);
  });

  it('asks before signing out when the request has no id_token_hint (RP-Initiated Logout §2)', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    // A single sign-on session at the provider: sign in to the orders app.
    await page.goto(`${stack.ordersUrl}/login?returnUrl=/app`);
    await signInWithPassword(page, stack.issuer, stack.user);
    await page.waitForURL(`${stack.ordersUrl}/app`);

    // A bare link to the end-session endpoint, as any site could send: a question, not a sign-out.
    await page.goto(`${stack.issuer}/logout`);
    expect(await page.locator('h1').textContent()).toBe('Sign out?');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'logout-confirm');
    const cookies = async () => (await page.context().cookies(stack.issuer)).map((cookie) => cookie.name);
    expect(await cookies()).toContain('op_session');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.issuer}/logout`);
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
    expect(await cookies()).not.toContain('op_session');
    expect(browser.cspViolations).toEqual([]);
  });

  it('cannot be framed by another site (frame-ancestors)', async () => {
    // Another site on this machine whose page embeds the device page in an iframe.
    const framing = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>framing</title><iframe src="${stack.issuer}/device"></iframe>`);
    });
    await new Promise<void>((done) => framing.listen(0, '127.0.0.1', done));
    try {
      browser = await launchBrowser();
      const { page } = browser;
      const blocked = page.waitForEvent('console', (message) => /frame-ancestors/.test(message.text()));
      await page.goto(`http://localhost:${(framing.address() as AddressInfo).port}/`);
      expect((await blocked).text()).toContain("frame-ancestors 'none'");
      // Nothing of the page rendered inside the frame.
      const framed = page.frames().find((frame) => frame !== page.mainFrame());
      expect(await framed?.locator('input[name="user_code"]').count()).toBe(0);
    } finally {
      framing.closeAllConnections();
      await new Promise((done) => framing.close(done));
    }
  });
});
