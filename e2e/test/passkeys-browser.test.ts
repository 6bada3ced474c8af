/**
 * Passkeys in Chromium (WebAuthn Level 3), with the DevTools protocol's virtual authenticator as
 * the person's device (a platform authenticator with resident keys and user verification). The
 * demo user signs in with the password, creates a passkey on the account page, signs out, signs
 * in with the passkey alone (no username), then with password and passkey, and removes it. Each
 * sign-in's ID token is checked by openid-client, the relying party's library. Screenshots of the
 * new pages go to test-artifacts/screenshots.
 */
import type { CDPSession, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectNoAxeViolations } from '../src/axe.js';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage, signInToSpa, signInWithPassword, signOutAt } from '../src/flows.js';
import { expectAccessiblePage } from '../src/page-checks.js';
import { useStack } from '../src/stack.js';

const PHISHING_RESISTANT = 'urn:oidc-orders:acr:phishing-resistant';

let browser: TestBrowser | undefined;

const stack = useStack({
  afterEachTest: async () => {
    await browser?.close();
    browser = undefined;
  },
});

/** A platform authenticator (CTAP2, internal) that keeps discoverable credentials and verifies the user. */
async function addVirtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return { cdp, authenticatorId };
}

const headingOf = (page: Page) => page.locator('h1').textContent();

describe('passkeys', () => {
  it('enrols a passkey on the account page, signs in with it alone and as second factor, removes it', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    const { cdp, authenticatorId } = await addVirtualAuthenticator(page);

    // Password sign-in to the account page, then "Add a passkey" (a fresh authentication).
    await page.goto(`${stack.issuer}/account`);
    await signInWithPassword(page, stack.issuer, stack.user);
    await page.waitForURL(`${stack.issuer}/account`);
    await browser.screenshot(page, 'account-passkeys-none');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => headingOf(page)).toBe('Add a passkey');
    await expectAccessiblePage(page, { stylesheets: 1 });
    await browser.screenshot(page, 'enrol-passkey');
    await page.getByLabel('Name of this passkey').fill('Test laptop');
    await page.getByRole('button', { name: 'Create passkey' }).click();

    // The first factor comes with recovery codes, then back to the account page.
    await expect.poll(() => headingOf(page)).toBe('Your recovery codes');
    await page.getByRole('button', { name: 'I have saved them, continue' }).click();
    await page.waitForURL(`${stack.issuer}/account`);
    await expect.poll(() => page.locator('[data-passkey]').count()).toBe(1);
    expect(await page.locator('[data-passkey] input[name="name"]').inputValue()).toBe('Test laptop');
    await browser.screenshot(page, 'account-passkeys');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    // residentKey 'required': the credential is discoverable, so no username is needed later.
    expect(credentials[0]!.isResidentCredential).toBe(true);

    // Signed out, then signed in with the passkey alone: the login page's button, no username.
    await signOutAt(page, stack.issuer);
    const passkeyOnly = await signInToSpa(page, stack, async () => {
      await expectLoginPage(page, stack.issuer);
      // One click on the login page's secondary button: no second page with the same button.
      const button = page.getByRole('button', { name: 'Sign in with a passkey' });
      await button.waitFor();
      expect(await button.getAttribute('class')).toBe('secondary');
      await expectAccessiblePage(page, { stylesheets: 1 });
      await expectNoAxeViolations(page, 'login page with the passkey button');
      await browser!.screenshot(page, 'login-with-passkey');
      await button.click();
    });
    expect(passkeyOnly.sub).toBe(stack.user.sub);
    // RFC 8176: a device-bound key (`hwk`; a synced one would be `swk`), the user verified (`user`).
    expect(passkeyOnly.amr).toEqual(expect.arrayContaining(['hwk', 'user']));
    expect(passkeyOnly.amr).not.toContain('pwd');
    expect(passkeyOnly.acr).toBe(PHISHING_RESISTANT);

    // Password first (prompt=login), then the passkey as the second factor.
    const twoSteps = await signInToSpa(
      page,
      stack,
      async () => {
        await signInWithPassword(page, stack.issuer, stack.user);
        await page.waitForURL((url) => url.pathname.endsWith('/passkey'));
        expect(await headingOf(page)).toBe('Two-step verification');
        await browser!.screenshot(page, 'passkey-second-factor');
        await page.getByRole('button', { name: 'Use your passkey' }).click();
      },
      { prompt: 'login' },
    );
    expect(twoSteps.amr).toEqual(expect.arrayContaining(['pwd', 'hwk', 'user', 'mfa']));
    expect(twoSteps.acr).toBe(PHISHING_RESISTANT);
    const { credentials: used } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(used[0]!.signCount).toBeGreaterThanOrEqual(2);

    // Removed on the account page (the session's authentication is recent).
    await page.goto(`${stack.issuer}/account`);
    // "Remove…" opens the question; the button inside it removes.
    await page.locator('[data-passkey] summary').click();
    await page.getByRole('button', { name: 'Yes, remove Test laptop' }).click();
    await expect.poll(() => page.locator('#account-notice').textContent()).toBe('Passkey removed.');
    expect(await page.locator('[data-passkey]').count()).toBe(0);
    await browser.screenshot(page, 'account-passkey-removed');
    expect(browser.cspViolations).toEqual([]);
  });
});
