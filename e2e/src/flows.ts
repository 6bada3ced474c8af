/** Steps a person takes on the authorization server's pages, shared by the browser tests. */
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Stack, StackUser } from './stack.js';

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

/** RP-initiated logout without a hint: the server asks, the person confirms. */
export async function signOutAt(page: Page, issuer: string): Promise<void> {
  await page.goto(`${issuer}/logout`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForLoadState();
}

/**
 * A sign-in of the public SPA client run by openid-client (PKCE, state, nonce): the browser goes
 * to the authorization URL, `act` takes the person through the pages, the redirect to the SPA's
 * callback is caught, and openid-client redeems the code and validates the ID token.
 */
export async function signInToSpa(
  page: Page,
  stack: Pick<Stack, 'issuer' | 'spaUrl'>,
  act: () => Promise<void>,
  parameters: Record<string, string> = {},
) {
  const config = await client.discovery(new URL(stack.issuer), 'orders-spa', undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const redirectUri = `${stack.spaUrl}/callback`;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...parameters,
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
