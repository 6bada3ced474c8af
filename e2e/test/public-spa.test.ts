/**
 * The public-client SPA (apps/spa, oidc-client-ts) on its own origin: authorization code + PKCE,
 * tokens in session storage, the orders API called cross-origin with the bearer token, an
 * access-token refresh forced by a short lifetime with the refresh token rotating, sign-out; and
 * the consent page of a client that asks for it (deny → access_denied, approve with the keyboard).
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
import { expectAccessiblePage } from '../src/page-checks.js';
import { useStack } from '../src/stack.js';

/** Short enough to wait out in a test, long enough for a sign-in on a busy machine. */
const ACCESS_TOKEN_TTL = 8;

let browser: TestBrowser | undefined;

const stack = useStack({
  options: () => ({ accessTokenTtl: ACCESS_TOKEN_TTL }),
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});
beforeAll(async () => {
  // Two orders for the user, placed by a back-office tool (API key), for the SPA to list.
  for (const quantity of [2, 5]) {
    const response = await fetch(`${stack.ordersUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.ordersApiKey },
      body: JSON.stringify({ email: stack.user.email, quantity }),
    });
    expect(response.status).toBe(201);
  }
});

interface StoredUser {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  expires_at: number;
  scope?: string;
  profile: { sub: string; name?: string };
}

/** oidc-client-ts's user record in session storage (`oidc.user:<authority>:<client_id>`). */
async function storedUser(page: Page, clientId = 'orders-spa'): Promise<StoredUser | null> {
  const key = `oidc.user:${stack.issuer}:${clientId}`;
  const raw = await page.evaluate((name) => sessionStorage.getItem(name), key);
  return raw === null ? null : (JSON.parse(raw) as StoredUser);
}

function refreshWith(refreshToken: string, clientId = 'orders-spa') {
  return fetch(`${stack.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  });
}

describe('the public-client SPA', () => {
  it('signs in with code + PKCE, calls the API, refreshes an expired access token with a rotated refresh token, and signs out', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const authorizeUrls: URL[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${stack.issuer}/authorize`)) authorizeUrls.push(new URL(request.url()));
    });

    await page.goto(stack.spaUrl);
    await expect.poll(() => page.locator('#status').textContent()).toBe('You are not signed in.');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'spa-signed-out');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await signInWithPassword(page, stack.issuer, stack.user);
    await page.waitForURL(`${stack.spaUrl}/`);
    await expect.poll(() => page.locator('#user-name').textContent()).toBe(stack.user.name);

    // The authorization request: code flow, PKCE S256, the SPA's scopes and its /callback.
    const authorize = authorizeUrls[0]!.searchParams;
    expect(authorize.get('client_id')).toBe('orders-spa');
    expect(authorize.get('response_type')).toBe('code');
    expect(authorize.get('code_challenge_method')).toBe('S256');
    expect(authorize.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.get('redirect_uri')).toBe(`${stack.spaUrl}/callback`);
    expect(authorize.get('scope')?.split(' ').sort()).toEqual([
      'email',
      'offline_access',
      'openid',
      'orders.read',
      'profile',
    ]);

    // Tokens live in session storage, nothing in local storage.
    const signedIn = await storedUser(page);
    expect(signedIn?.access_token).toBeTruthy();
    expect(signedIn?.refresh_token).toBeTruthy();
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    await page.getByRole('button', { name: 'Load my orders' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/^Loaded 2 orders/);
    expect(await page.locator('#orders li').allTextContents()).toEqual([
      expect.stringMatching(/^Order #\d+: 2 × item, \$19\.98 \(created\)$/),
      expect.stringMatching(/^Order #\d+: 5 × item, \$49\.95 \(created\)$/),
    ]);
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'spa-orders');

    // Wait until the access token has expired (the page's own clock), then call again.
    const before = (await storedUser(page))!;
    await page.waitForFunction((expiresAt) => Date.now() / 1000 > expiresAt + 1, before.expires_at, {
      timeout: 60_000,
      polling: 250,
    });
    const refused = await fetch(`${stack.ordersUrl}/orders`, {
      headers: { authorization: `Bearer ${before.access_token}` },
    });
    expect(refused.status).toBe(401);

    await page.getByRole('button', { name: 'Load my orders' }).click();
    await expect
      .poll(() => page.locator('#status').textContent())
      .toBe('Loaded 2 orders (access token refreshed).');
    const after = (await storedUser(page))!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.expires_at).toBeGreaterThan(before.expires_at);
    // The refresh token rotated: a new one came back, and the old one is no longer accepted
    // (RFC 9700 §4.14.2; presenting it again is reuse, which revokes the grant).
    expect(after.refresh_token).toBeTruthy();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.profile.sub).toBe(stack.user.sub);
    const reused = await refreshWith(before.refresh_token!);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });

    // Sign out: the SPA forgets its tokens and the provider ends its session.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.spaUrl}/`);
    await expect.poll(() => page.locator('#status').textContent()).toBe('You are not signed in.');
    expect(await storedUser(page)).toBeNull();
    const names = (await browser.context.cookies()).map((cookie) => cookie.name);
    expect(names).not.toContain('op_session');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectLoginPage(page, stack.issuer);

    expect(browser.cspViolations).toEqual([]);
  });

  it('shows the consent page of a client that asks, and a denial reaches the client as access_denied', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const callbacks: URL[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${stack.dashboardUrl}/callback`)) callbacks.push(new URL(request.url()));
    });

    await page.goto(stack.dashboardUrl);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await signInWithPassword(page, stack.issuer, stack.user);

    // The consent page: the client's name, and each scope in plain words.
    await page.waitForURL((url) => url.pathname.endsWith('/consent'));
    expect(await page.locator('h1').textContent()).toBe('Allow Orders Dashboard access?');
    const scopes = await page.locator('.scopes li span').allTextContents();
    expect(scopes).toEqual(
      expect.arrayContaining([
        'Confirm who you are when you sign in',
        'See your name',
        'View your orders',
        'Keep access when you are not using the application',
      ]),
    );
    expect(await page.locator('main').textContent()).toContain(`Signed in as ${stack.user.name}`);
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'consent');

    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${stack.dashboardUrl}/`);
    await expect.poll(() => page.locator('#error').getAttribute('data-error')).toBe('access_denied');
    expect(await page.locator('#error').textContent()).toBe('Sign-in was not completed: access_denied');
    // RFC 6749 §4.1.2.1: the error came back to the registered redirect URI, with the state and iss.
    const denied = callbacks.at(-1)!.searchParams;
    expect(denied.get('error')).toBe('access_denied');
    expect(denied.get('state')).toBeTruthy();
    expect(denied.get('iss')).toBe(stack.issuer);
    expect(denied.get('code')).toBeNull();
    expect(await storedUser(page, 'orders-dashboard')).toBeNull();
    await browser.screenshot(page, 'spa-access-denied');

    // A second attempt, keyboard only on the consent page: Tab to "Allow", Enter.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname.endsWith('/consent'));
    const focusOrder: string[] = [];
    for (let presses = 0; presses < 5; presses++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
      focusOrder.push(focused);
      if (focused === 'Allow') break;
    }
    expect(focusOrder).toEqual(['Deny', 'Allow']);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${stack.dashboardUrl}/`);
    await expect.poll(() => page.locator('#user-name').textContent()).toBe(stack.user.name);
    expect((await storedUser(page, 'orders-dashboard'))?.refresh_token).toBeTruthy();

    expect(browser.cspViolations).toEqual([]);
  });
});
