/**
 * The first-run pages in Chromium, as a newcomer walks through them: no raw JSON page, error pages
 * in the product's look, one host name, a way on after pressing Back, and the /app details. Each
 * page is photographed at desktop width and at 375 px under test-artifacts/screenshots/.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { signInWithPassword } from '../src/flows.js';
import { useStack } from '../src/stack.js';

let browser: TestBrowser | undefined;

const stack = useStack({
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});

/** Desktop and phone screenshots of the current page. */
async function photograph(page: Page, name: string): Promise<void> {
  await browser!.screenshot(page, name);
  const original = page.viewportSize();
  await page.setViewportSize({ width: 375, height: 720 });
  try {
    await browser!.screenshot(page, `${name}-375`);
  } finally {
    if (original) await page.setViewportSize(original);
  }
}

/** A page is a product page: HTML with a stylesheet and a heading, never a JSON document. */
async function expectProductPage(page: Page): Promise<void> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText (the rendered text), not the DOM property.
  const text = (await page.locator('body').innerText()).trim();
  expect(text.startsWith('{'), `raw JSON shown: ${text.slice(0, 80)}`).toBe(false);
  expect(await page.locator('link[rel="stylesheet"]').count()).toBe(1);
  expect(await page.locator('h1').count()).toBe(1);
}

/** Responses with status 404 the browser received (a missing favicon shows up here). */
function recordNotFound(page: Page): string[] {
  const missing: string[] = [];
  page.on('response', (response) => {
    if (response.status() === 404) missing.push(response.url());
  });
  return missing;
}

describe('every browser-facing URL is a page (item 1) in the product look (item 2)', () => {
  it('the issuer root is a landing page linking discovery, JWKS and health, and the dev seed', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const missing = recordNotFound(page);
    const response = await page.goto(`${stack.issuer}/`);
    expect(response?.status()).toBe(200);
    await expectProductPage(page);
    for (const name of ['Discovery document', 'Signing keys (JWKS)', 'Health']) {
      expect(await page.getByRole('link', { name }).count()).toBe(1);
    }
    expect(await page.locator('.dev-only').isVisible()).toBe(true);
    await photograph(page, 'issuer-home');
    expect(missing).toEqual([]);
  });

  it('unknown paths on both services are 404 pages', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    for (const [url, name] of [
      [`${stack.issuer}/nope`, 'issuer-not-found'],
      [`${stack.ordersUrl}/nope`, 'orders-not-found'],
    ] as const) {
      const response = await page.goto(url);
      expect(response?.status()).toBe(404);
      await expectProductPage(page);
      await photograph(page, name);
    }
  });

  it('an orders error page keeps the reason folded away and links back to /app', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const response = await page.goto(`${stack.ordersUrl}/login?returnUrl=https://elsewhere.example/`);
    expect(response?.status()).toBe(400);
    await expectProductPage(page);
    expect(await page.locator('details.detail').count()).toBe(1);
    expect(await page.locator('details.detail code').isVisible()).toBe(false);
    await photograph(page, 'orders-error');
    await page.getByRole('link', { name: 'Go to your orders' }).click();
    await page.waitForURL(`${stack.ordersUrl}/app`);
  });
});

describe('a signed-in walk-through', () => {
  it('one host name (item 3), / lands on /app (item 1), Back gives a way on (item 4), /app details (item 5)', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const missing = recordNotFound(page);

    // Item 3: 127.0.0.1 instead of localhost is sent to BASE_URL before anything else.
    const { port } = new URL(stack.ordersUrl);
    await page.goto(`http://127.0.0.1:${port}/app`);
    await page.waitForURL(`${stack.ordersUrl}/app`);

    await page.locator('#sign-in').click();
    await signInWithPassword(page, stack.issuer, stack.user);
    await page.waitForURL(`${stack.ordersUrl}/app`);
    await expect.poll(() => page.locator('#no-orders').isVisible()).toBe(true);
    // Item 5: one "no orders" message, not two.
    expect(await page.locator('#status').textContent()).toBe('');

    // Item 1: the orders service's root is not a JSON page for a person.
    await page.goto(`${stack.ordersUrl}/`);
    await page.waitForURL(`${stack.ordersUrl}/app`);

    // Item 4: Back after a password sign-in loads the login page of a finished interaction; the
    // signed-in browser goes on to the application.
    await page.goto(`${stack.issuer}/interaction/finished-one/login?client_id=orders-web`);
    await page.waitForURL(`${stack.ordersUrl}/app`);
    // A browser without the session sees the expired page, with the way on.
    const stranger = await launchBrowser();
    try {
      const expired = await stranger.page.goto(
        `${stack.issuer}/interaction/finished-one/login?client_id=orders-web`,
      );
      expect(expired?.status()).toBe(400);
      await expectProductPage(stranger.page);
      await stranger.screenshot(stranger.page, 'sign-in-expired');
      expect(await stranger.page.locator('a.button').getAttribute('href')).toBe(`${stack.ordersUrl}/`);
    } finally {
      await stranger.close();
    }

    // Item 5: place orders; the button is level with the input; oldest first; a validation error
    // replaces the success message.
    await page.getByLabel('Quantity').fill('3');
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/^Order #\d+ placed/);
    await page.getByLabel('Quantity').fill('1');
    await page.getByRole('button', { name: 'Place order' }).click();
    const rows = page.locator('#orders tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(0).locator('td').nth(1).textContent()).toBe('3');
    const input = await page.getByLabel('Quantity').boundingBox();
    const button = await page.getByRole('button', { name: 'Place order' }).boundingBox();
    expect(Math.abs(input!.y - button!.y)).toBeLessThanOrEqual(2);
    await page.getByLabel('Quantity').fill('0');
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect.poll(() => page.locator('#error').isVisible()).toBe(true);
    expect(await page.locator('#status').textContent()).toBe('');

    // Item 5: at 375 px every column is visible (nothing cut off).
    await page.setViewportSize({ width: 375, height: 720 });
    const overflow = await page
      .locator('.table-wrap')
      .evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1024, height: 720 });
    await photograph(page, 'orders-app-details');

    // Item 5: favicons everywhere, so no 404 in the console.
    expect(missing).toEqual([]);
    // Item 5: no HSTS over plain HTTP.
    const app = await page.goto(`${stack.ordersUrl}/app`);
    expect(app?.headers()['strict-transport-security']).toBeUndefined();
  });

  it('the SPA shows orders.read whole (item 5)', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const missing = recordNotFound(page);
    await page.setViewportSize({ width: 375, height: 720 });
    await page.goto(`${stack.spaUrl}/`);
    await page.getByRole('button', { name: /sign in/i }).click();
    await signInWithPassword(page, stack.issuer, stack.user);
    await expect.poll(() => page.locator('#scopes').textContent()).toContain('orders.read');
    await browser.screenshot(page, 'spa-375');
    const lines = await page.locator('#scopes').evaluate((element) => {
      const range = document.createRange();
      const text = element.firstChild!;
      const content = text.textContent ?? '';
      const start = content.indexOf('orders.read');
      range.setStart(text, start);
      range.setEnd(text, start + 'orders.read'.length);
      return range.getClientRects().length;
    });
    expect(lines).toBe(1);
    expect(missing).toEqual([]);
  });
});
