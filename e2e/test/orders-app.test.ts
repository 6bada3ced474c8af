/**
 * The orders app (`/app` on the orders service) in Chromium: sign-in through the provider with
 * the keyboard only, the BFF (user, orders, placing an order), cookies as the browser stores them,
 * no token reachable from the page, reload, sign-out at the provider, and SSO into the public SPA.
 */
import type { Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
import { expectAccessiblePage, JWT_PATTERN } from '../src/page-checks.js';
import { useStack } from '../src/stack.js';

let browser: TestBrowser | undefined;

const stack = useStack({
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});

/** Every response the page received from the orders service, as text (to look for tokens). */
function recordOrdersResponses(page: Page, ordersUrl: string): string[] {
  const bodies: string[] = [];
  page.on('response', (response: Response) => {
    if (!response.url().startsWith(ordersUrl)) return;
    if (response.status() >= 300 && response.status() < 400) return;
    void response.text().then(
      (text) => bodies.push(`${response.url()}\n${JSON.stringify(response.headers())}\n${text}`),
      () => {},
    );
  });
  return bodies;
}

async function openSignedOutApp(page: Page): Promise<void> {
  await page.goto(`${stack.ordersUrl}/app`);
  await expect.poll(() => page.locator('#sign-in').isVisible()).toBe(true);
}

async function expectSignedInApp(page: Page): Promise<void> {
  await page.waitForURL(`${stack.ordersUrl}/app`);
  await expect.poll(() => page.locator('#user-name').textContent()).toBe(stack.user.name);
  // Empty with no orders: the list itself says "You have no orders yet."
  await expect.poll(() => page.locator('#status').textContent()).toMatch(/^(You have \d+ orders?\.)?$/);
}

describe('the orders app', () => {
  it('signs in with the keyboard only, lists and places orders, keeps the session on reload, and signs out at the provider', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const responses = recordOrdersResponses(page, stack.ordersUrl);

    await openSignedOutApp(page);
    await expect.poll(() => page.locator('#status').textContent()).toBe('You are not signed in.');
    expect(await page.locator('#sign-in').getAttribute('href')).toBe('/login?returnUrl=/app');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'orders-app-signed-out');

    // Keyboard only: Tab to "Sign in" and press Enter.
    for (let presses = 0; presses < 10; presses++) {
      await page.keyboard.press('Tab');
      if (await page.locator('#sign-in').evaluate((link) => link === document.activeElement)) break;
    }
    await page.keyboard.press('Enter');

    await expectLoginPage(page, stack.issuer);
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'login');
    // The username field has the focus on arrival; Tab moves to the password; Enter submits.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('username');
    await page.keyboard.type(stack.user.username);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    await page.keyboard.type(stack.user.password);
    await page.keyboard.press('Enter');

    await expectSignedInApp(page);
    await expect.poll(() => page.locator('#no-orders').isVisible()).toBe(true);

    // Place an order through the BFF (POST /bff/orders), again with the keyboard.
    await page.getByLabel('Quantity').fill('3');
    await page.getByLabel('Quantity').press('Enter');
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/^Order #\d+ placed: 3 items\.$/);
    await page.getByLabel('Quantity').fill('1');
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/^Order #\d+ placed: 1 item\.$/);
    const rows = page.locator('#orders tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    // Oldest first, as GET /orders, the SPA and the CLI list them.
    expect(await rows.nth(0).locator('td').nth(1).textContent()).toBe('3');
    expect(await rows.nth(0).locator('td').nth(2).textContent()).toBe('$29.97');
    expect(await rows.nth(1).locator('td').nth(1).textContent()).toBe('1');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'orders-app');

    // No token is reachable from page scripts: no readable cookie, nothing stored, none in the DOM.
    const reachable = await page.evaluate(async () => ({
      cookie: document.cookie,
      localStorage: localStorage.length,
      sessionStorage: sessionStorage.length,
      indexedDb: (await indexedDB.databases()).length,
      html: document.documentElement.outerHTML,
    }));
    expect(reachable).toMatchObject({ cookie: '', localStorage: 0, sessionStorage: 0, indexedDb: 0 });
    expect(reachable.html).not.toMatch(JWT_PATTERN);
    // Nor in anything the orders service sent to this browser (pages, scripts, BFF answers, headers).
    await expect.poll(() => responses.some((body) => body.includes('/bff/orders'))).toBe(true);
    for (const body of responses) {
      expect(body).not.toMatch(JWT_PATTERN);
      expect(body).not.toMatch(/access_token|refresh_token|id_token/);
    }

    // Reload: the server-side session carries on.
    await page.reload();
    await expectSignedInApp(page);
    await expect.poll(() => rows.count()).toBe(2);

    // A link to /logout on another site only asks; the session lives on. 127.0.0.1 is another site
    // than localhost (the provider on localhost would be same-site: ports do not make sites).
    await page.goto(`${stack.issuer.replace('localhost', '127.0.0.1')}/.well-known/openid-configuration`);
    await page.evaluate((target) => {
      window.location.href = target;
    }, `${stack.ordersUrl}/logout`);
    await page.waitForURL(`${stack.ordersUrl}/logout`);
    expect(await page.locator('form[method="post"] input[name="csrf"]').count()).toBe(1);
    await page.goto(`${stack.ordersUrl}/app`);
    await expectSignedInApp(page);

    // Sign out: the button POSTs with the session's CSRF token; the orders session and the
    // provider's session both end, and the provider sends the browser back to the orders page that
    // says so.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.ordersUrl}/signed-out`);
    expect(await page.locator('[data-signed-out="true"]').count()).toBe(1);
    const names = (await browser.context.cookies()).map((cookie) => cookie.name);
    expect(names).not.toContain('__Host-orders-session');
    expect(names).not.toContain('op_session');

    await openSignedOutApp(page);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInWithPassword(page, stack.issuer, stack.user);
    await expectSignedInApp(page);
    await expect.poll(() => rows.count()).toBe(2);

    expect(browser.cspViolations).toEqual([]);
  });

  it('stores its cookies as HttpOnly, SameSite=Lax and, for the orders session, Secure with the __Host- prefix', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await openSignedOutApp(page);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInWithPassword(page, stack.issuer, stack.user);
    await expectSignedInApp(page);

    const cookies = await browser.context.cookies();
    const byName = new Map(cookies.map((cookie) => [cookie.name, cookie]));
    // The sign-in correlation cookie was single-use and is gone; nothing else was set.
    expect([...byName.keys()].sort()).toEqual(['__Host-orders-session', 'op_browser', 'op_session']);

    // The orders session: __Host- (Secure, Path=/, host-only), HttpOnly, Lax, a 256-bit opaque key.
    expect(byName.get('__Host-orders-session')).toMatchObject({
      domain: 'localhost',
      path: '/',
      secure: true,
      httpOnly: true,
      sameSite: 'Lax',
    });
    expect(byName.get('__Host-orders-session')!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(byName.get('__Host-orders-session')!.expires).toBeGreaterThan(Date.now() / 1000);
    // The provider's cookies: HttpOnly and Lax; Secure and __Host- only for an https issuer, and
    // this test issuer is http://localhost (auth-server README, Cookies).
    for (const name of ['op_session', 'op_browser']) {
      expect(byName.get(name), name).toMatchObject({
        domain: 'localhost',
        path: '/',
        secure: false,
        httpOnly: true,
        sameSite: 'Lax',
      });
    }
    expect(browser.cspViolations).toEqual([]);
  });

  it('signs in to the public SPA without a password prompt after signing in to the orders app (SSO)', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await openSignedOutApp(page);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInWithPassword(page, stack.issuer, stack.user);
    await expectSignedInApp(page);
    const count = Number((await page.locator('#status').textContent())?.match(/\d+/)?.[0]);

    // Every document the window requests, redirects included.
    const visited: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) visited.push(request.url());
    });
    await page.goto(stack.spaUrl);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.spaUrl}/`);
    await expect.poll(() => page.locator('#user-name').textContent()).toBe(stack.user.name);

    // Straight through /authorize and back: no login (or consent) page on the way.
    expect(visited.some((url) => url.startsWith(`${stack.issuer}/authorize`))).toBe(true);
    expect(visited.filter((url) => url.includes('/interaction/'))).toEqual([]);

    // And the SPA's own bearer token (cross-origin, CORS) reads the orders the BFF lists.
    await page.getByRole('button', { name: 'Load my orders' }).click();
    await expect
      .poll(() => page.locator('#status').textContent())
      .toBe(`Loaded ${count} order${count === 1 ? '' : 's'}.`);
    await browser.screenshot(page, 'spa-after-sso');
    expect(browser.cspViolations).toEqual([]);
  });
});
