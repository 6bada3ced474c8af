/**
 * Directory users in Chromium: a person whose account lives in OpenLDAP (the auth server's slapd
 * fixture, apps/auth-server/test/helpers/slapd.ts) signs in on the ordinary login page with the
 * directory password, then adds a passkey on the account page and signs in with it alone; the
 * ID tokens, checked by openid-client, carry the same `sub` each time.
 */
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { directoryFixtureFor, type E2eDirectory } from '../src/directory.js';
import { expectLoginPage, signInWithPassword } from '../src/flows.js';
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

/** RP-initiated logout without a hint: the server asks, the person confirms. */
async function signOut(page: Page) {
  await page.goto(`${stack.issuer}/logout`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForLoadState();
}

/** The public SPA client's sign-in run by openid-client; `act` takes the person through the pages. */
async function signInToSpa(page: Page, act: () => Promise<void>) {
  const config = await client.discovery(new URL(stack.issuer), 'orders-spa', undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const redirectUri = `${stack.spaUrl}/callback`;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile email',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  await page.route(`${redirectUri}**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/plain', body: 'callback' }),
  );
  await page.goto(url.href);
  await act();
  await page.waitForURL((current) => current.href.startsWith(redirectUri));
  const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  await page.unroute(`${redirectUri}**`);
  return tokens.claims()!;
}

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
    const first = await signInToSpa(page, () => signInWithPassword(page, stack.issuer, asTyped));
    expect(first).toMatchObject({ name: person.cn, email: 'dana@example.test' });
    expect(first.amr).toContain('pwd');
    await signOut(page);

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
    await signOut(page);

    const withPasskey = await signInToSpa(page, async () => {
      await expectLoginPage(page, stack.issuer);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    });
    expect(withPasskey.sub).toBe(first.sub);
    expect(withPasskey.amr).toEqual(expect.arrayContaining(['hwk', 'user']));
  });
});
