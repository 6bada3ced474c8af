/**
 * The sign-in pages in each language, in Chromium (CONTRACT "Languages"): the authorization
 * request's `ui_locales` chooses the login and consent pages' language, the switcher's cookie the
 * forgot-password, device verification, error and account pages'; `<html lang>` names it, Arabic pages are right to left, and
 * axe-core finds no violation in any of them. Arabic pages are photographed at 375 pixels under
 * test-artifacts/screenshots/ (docs/screenshots/ keeps a copy of them).
 */
import type { Page, Route } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectNoAxeViolations } from '../src/axe.js';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { useStack } from '../src/stack.js';

const browsers: TestBrowser[] = [];

const stack = useStack({
  afterEachTest: async () => {
    for (const browser of browsers.splice(0)) await browser.close();
  },
});

const LANGUAGES = [
  { code: 'en', signIn: 'Sign in', allow: 'Allow' },
  { code: 'de', signIn: 'Anmelden', allow: 'Erlauben' },
  { code: 'fr', signIn: 'Se connecter', allow: 'Autoriser' },
  { code: 'ar', signIn: 'تسجيل الدخول', allow: 'سماح' },
] as const;

type Language = (typeof LANGUAGES)[number];

/** Every /authorize of this browser carries `ui_locales` (as a client asking for a language would). */
async function askForLanguage(page: Page, code: string): Promise<void> {
  await page.route(
    (url) => url.href.startsWith(`${stack.issuer}/authorize?`),
    (route: Route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('ui_locales', code);
      return route.continue({ url: url.href });
    },
  );
}

/** The page is in `language` (lang, dir), has no axe violation, and in Arabic is photographed at 375 px. */
async function expectPageIn(browser: TestBrowser, page: Page, language: Language, name: string) {
  expect(await page.locator('html').getAttribute('lang')).toBe(language.code);
  expect(await page.locator('html').getAttribute('dir')).toBe(language.code === 'ar' ? 'rtl' : null);
  await expectNoAxeViolations(page, `${name} (${language.code})`);
  if (language.code === 'ar') {
    const original = page.viewportSize();
    await page.setViewportSize({ width: 375, height: 720 });
    await browser.screenshot(page, `ar-${name}-375`);
    if (original) await page.setViewportSize(original);
  }
}

describe.each(LANGUAGES)('pages in $code', (language) => {
  it('login (with its error), consent, forgot password, device verification, and an error page', async () => {
    const browser = await launchBrowser();
    browsers.push(browser);
    const { page } = browser;
    await askForLanguage(page, language.code);

    // The dashboard asks for consent: login, then consent, both in the requested language.
    await page.goto(stack.dashboardUrl);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname.endsWith('/login'));
    await page.locator('#username').waitFor();
    expect(await page.locator('h1').textContent()).toBe(language.signIn);
    await expectPageIn(browser, page, language, 'login');

    await page.locator('#username').fill(stack.user.username);
    await page.locator('#password').fill('not-the-password');
    await page.locator('button[type="submit"].primary').click();
    await page.locator('#login-error').waitFor();
    await expectPageIn(browser, page, language, 'login-error');

    await page.locator('#password').fill(stack.user.password);
    await page.locator('button[type="submit"].primary').click();
    await page.waitForURL((url) => url.pathname.endsWith('/consent'));
    expect(await page.locator('button[value="approve"]').textContent()).toBe(language.allow);
    await expectPageIn(browser, page, language, 'consent');

    // Pages outside an authorization request: the switcher's cookie, as a click on it leaves.
    await browser.context.addCookies([{ name: 'lang', value: language.code, url: stack.issuer }]);
    await page.goto(`${stack.issuer}/forgot-password`);
    await expectPageIn(browser, page, language, 'forgot-password');
    await page.goto(`${stack.issuer}/device`);
    await page.locator('#user_code').waitFor();
    await expectPageIn(browser, page, language, 'device');

    await page.goto(`${stack.issuer}/interaction/no-such-interaction/login`);
    await expectPageIn(browser, page, language, 'error');
    expect(browser.cspViolations).toEqual([]);
  });
});

describe('the account page', () => {
  it('in Arabic: right to left, no axe violation, photographed at 375 px', async () => {
    const browser = await launchBrowser();
    browsers.push(browser);
    const { page } = browser;
    await browser.context.addCookies([{ name: 'lang', value: 'ar', url: stack.issuer }]);
    await page.goto(`${stack.issuer}/account`);
    await page.locator('#username').fill(stack.user.username);
    await page.locator('#password').fill(stack.user.password);
    await page.locator('button[type="submit"].primary').click();
    await page.waitForURL(`${stack.issuer}/account`);
    expect(await page.locator('h1').textContent()).toBe('حسابك');
    expect(await page.locator('#sessions-title').textContent()).toBe('الجلسات النشطة');
    await expectPageIn(browser, page, LANGUAGES[3], 'account');
    expect(browser.cspViolations).toEqual([]);
  });
});

describe('the language switcher', () => {
  it('works without script under the CSP and remembers the choice', async () => {
    const browser = await launchBrowser();
    browsers.push(browser);
    const { page } = browser;
    await page.goto(`${stack.issuer}/forgot-password`);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.locator('nav.languages a[hreflang="de"]').click();
    await page.waitForURL(`${stack.issuer}/forgot-password`);
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    expect(await page.locator('h1').textContent()).toBe('Passwort vergessen?');
    expect(await page.locator('nav.languages [aria-current="true"]').textContent()).toBe('Deutsch');
    await page.goto(`${stack.issuer}/forgot-password`);
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    expect(browser.cspViolations).toEqual([]);
  });
});
