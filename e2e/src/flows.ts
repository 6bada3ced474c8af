/** Steps a person takes on the authorization server's pages, shared by the browser tests. */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { StackUser } from './stack.js';

/** Waits for the login page (served by `issuer`), then returns. */
export async function expectLoginPage(page: Page, issuer: string): Promise<void> {
  await page.waitForURL(
    (url) => url.href.startsWith(`${issuer}/interaction/`) && url.pathname.endsWith('/login'),
  );
  await page.locator('input[name="password"]').waitFor();
  expect(await page.locator('h1').textContent()).toBe('Sign in');
}

/** Fills and submits the login form with the mouse, as most people do. */
export async function signInWithPassword(page: Page, issuer: string, user: StackUser): Promise<void> {
  await expectLoginPage(page, issuer);
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
