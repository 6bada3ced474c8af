/**
 * Directory users in Chromium: a person whose account lives in OpenLDAP (the auth server's slapd
 * fixture, the service kit's testing/slapd.ts) signs in on the ordinary login page with the
 * directory password, then adds a passkey on the account page and signs in with it alone; the
 * ID tokens, checked by openid-client, carry the same `sub` each time.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { directoryFixtureFor, type E2eDirectory } from '../src/directory.js';
import { expectLoginPage, signInToSpa, signInWithPassword, signOutAt } from '../src/flows.js';
import { type Stack, startStack } from '../src/stack.js';

let directory: E2eDirectory;
let stack: Stack;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  directory = await directoryFixtureFor();
  stack = await startStack({ authEnv: directory.serverEnvironment });
});
afterEach(async (context) => {
  if (context.task.result?.state === 'fail') console.error(stack.logs());
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await stack?.stop();
  await directory?.stop();
});

const headingOf = (page: Page) => page.locator('h1').textContent();

describe('a directory user in Chromium', () => {
  it('signs in on the login page with the directory password, then with a passkey added on the account page', async () => {
    const person = await directory.addUser('dana', { mail: 'dana@example.test' });
    // What the person types; `sub` is the server's to choose (the stack user's fields are not used).
    const asTyped = {
      sub: '',
      name: person.cn,
      email: 'dana@example.test',
      username: 'dana',
      password: person.password,
    };
    browser = await launchBrowser();
    const { page } = browser;

    // The directory password on the login page of an application's sign-in.
    const first = await signInToSpa(page, stack, () => signInWithPassword(page, stack.issuer, asTyped), {
      scope: 'openid profile email',
    });
    expect(first).toMatchObject({ name: person.cn, email: 'dana@example.test' });
    expect(first.amr).toContain('pwd');
    await signOutAt(page, stack.issuer);

    // A passkey on the account page, signed in there with the directory password; a virtual
    // platform authenticator is the person's device.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    await page.goto(`${stack.issuer}/account`);
    await signInWithPassword(page, stack.issuer, asTyped);
    await page.waitForURL(`${stack.issuer}/account`);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => headingOf(page)).toBe('Add a passkey');
    await page.getByLabel('Name of this passkey').fill('Dana laptop');
    await page.getByRole('button', { name: 'Create passkey' }).click();
    await expect.poll(() => headingOf(page)).toBe('Your recovery codes');
    await page.getByRole('button', { name: 'I have saved them, continue' }).click();
    await page.waitForURL(`${stack.issuer}/account`);
    await signOutAt(page, stack.issuer);

    const withPasskey = await signInToSpa(page, stack, async () => {
      await expectLoginPage(page, stack.issuer);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    });
    expect(withPasskey.sub).toBe(first.sub);
    expect(withPasskey.amr).toEqual(expect.arrayContaining(['hwk', 'user']));
  });
});
