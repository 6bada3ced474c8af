import { existsSync } from 'node:fs';
import { findFreePort } from '@oidc-orders/service-kit/testing';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { startRelyingPartyFlow } from './helpers/relying-party.js';
import { ALICE, BOB, CONSENTING, signInSeed, startSignInApp } from './sign-in-fixtures.js';

/**
 * The federated sign-in in a real Chromium: from our login page's `data-sign-in="idp:ours"` button,
 * through the upstream's own login page (a second instance of this server), back to our consent
 * page and on to the client with a code whose ID token says `fed`; and linking the upstream from
 * the account page. Needs Debian's chromium (`apt-get install chromium`, or CHROMIUM_PATH).
 *
 * The upstream is `localhost`, ours `127.0.0.1`: cookies do not tell ports apart (RFC 6265 §8.5), so
 * two instances on one host name would overwrite each other's session cookie, and a link started while
 * signed in here could never come back to the same session.
 */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FEDERATING = { id: 'federating', secret: 'federating-secret-for-tests-0123456789' };

let browser: Browser;
let ours: Awaited<ReturnType<typeof startSignInApp>>;
let upstream: Awaited<ReturnType<typeof startSignInApp>>;
let issuer: string;
let upstreamIssuer: string;

async function startListening(app: Awaited<ReturnType<typeof startSignInApp>>, url: string) {
  await app.app.listen({ port: Number(new URL(url).port), host: new URL(url).hostname });
}

/** Our login page or the upstream's (the same server): the password sign-in. */
async function signInWithPassword(page: Page, user: { username: string; password: string }) {
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await page.click('button[type="submit"].primary');
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`install chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  issuer = `http://127.0.0.1:${await findFreePort()}`;
  upstreamIssuer = `http://localhost:${await findFreePort()}`;
  const seed = signInSeed();
  upstream = await startSignInApp({
    env: { ISSUER: upstreamIssuer },
    seed: {
      ...seed,
      clients: [
        ...(seed.clients ?? []),
        {
          client_id: FEDERATING.id,
          client_secret: FEDERATING.secret,
          redirect_uris: [`${issuer}/idp/ours/callback`],
          grant_types: ['authorization_code'],
          scope: 'openid profile email',
          skip_consent: true,
        },
      ],
    },
  });
  await startListening(upstream, upstreamIssuer);
  ours = await startSignInApp({
    env: { ISSUER: issuer },
    seed: {
      ...seed,
      identity_providers: [
        {
          id: 'ours',
          issuer: upstreamIssuer,
          client_id: FEDERATING.id,
          client_secret: FEDERATING.secret,
          scope: 'openid profile email',
          display_name: 'Partner account',
        },
      ],
    } as SeedDocument,
  });
  await startListening(ours, issuer);
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ours?.close();
  await upstream?.close();
});

describe('the federated sign-in in Chromium', () => {
  it('goes from our login page through the upstream’s login page and back, and the client gets amr fed', async () => {
    const { authorizationUrl, redeem } = await startRelyingPartyFlow(issuer, CONSENTING, {
      scope: 'openid profile email',
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    // The client's redirect URI is not served: the browser's request to it is the result.
    let redirected: URL | undefined;
    await context.route(`${CONSENTING.redirectUri}**`, async (route) => {
      redirected = new URL(route.request().url());
      await route.fulfill({ status: 200, body: 'client' });
    });

    await page.goto(authorizationUrl.href);
    await page.click('[data-sign-in="idp:ours"]');
    await page.waitForURL((url) => url.origin === upstreamIssuer);
    await signInWithPassword(page, ALICE);
    await page.waitForURL((url) => url.origin === issuer && url.pathname.endsWith('/consent'));
    await page.click('button[name="decision"][value="approve"]');
    await expect.poll(() => redirected?.href, { timeout: 15_000 }).toBeDefined();

    const tokens = await redeem(redirected!);
    expect(tokens.claims()?.amr).toEqual(expect.arrayContaining(['fed', 'pwd']));
    await context.close();
  }, 120_000);

  it('links the upstream from the account page: Link, the upstream’s login page, back to the account page that lists it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${issuer}/account`);
    await signInWithPassword(page, BOB);
    await page.waitForURL((url) => url.origin === issuer && url.pathname === '/account');

    // The form posts to us; CSP form-action 'self' must not stop the way on to the provider.
    await page.click('[data-action="link-provider"][data-provider="ours"]');
    await page.waitForURL((url) => url.origin === upstreamIssuer, { timeout: 15_000 });
    await signInWithPassword(page, BOB);
    await page.waitForURL((url) => url.origin === issuer && url.pathname === '/account');

    await page.locator('[data-linked-provider="ours"]').waitFor();
    expect(await page.locator('#account-notice').textContent()).toBe('Linked Partner account.');
    expect(await page.locator('[data-action="link-provider"]').count()).toBe(0);
    await context.close();
  }, 120_000);
});
