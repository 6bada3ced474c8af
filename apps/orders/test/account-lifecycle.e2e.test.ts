import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from './helpers/app.js';
import {
  type AuthServerProcess,
  type AuthServerSeed,
  postgresForThisFile,
  startAuthServer,
} from './helpers/auth-server.js';
import { readPostForm, TestBrowser } from './helpers/browser.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { findFreePort } from './helpers/server-process.js';
import { signInThroughCallback } from './helpers/sign-in.js';

/**
 * A user's sessions at the provider end, and so does their session in this app: the provider sends
 * OIDC Back-Channel Logout (a logout token with `sid` and `sub`) for every session it ends, from
 * whichever process ends it, and this app deletes the session on receipt (`/bff/user` answers 401).
 * Ended by: a password change on the provider's account page (another browser), the operator's
 * `users disable` / `reset-password` / `reset-mfa` (a separate process on the provider's database),
 * and a restart whose seed file no longer names the user. The provider runs as a child process on
 * PostgreSQL (the operator command opens the same database from another process).
 */
const postgres = await postgresForThisFile('test/account-lifecycle.e2e.test.ts');

const CLIENT_SECRET = randomBytes(24).toString('base64url');
const user = (name: string) => ({
  sub: `u-${name}`,
  username: name,
  password: `${name}-${randomBytes(12).toString('base64url')}`,
});
const ALICE = user('alice');
const BOB = user('bob');
const CAROL = user('carol');
const DAVE = user('dave');
const ERIN = user('erin');

let auth: AuthServerProcess;
let database: TestDatabase;
let orders: FastifyInstance;
let baseUrl: string;

function seed(users: ReadonlyArray<typeof ALICE>): AuthServerSeed {
  return {
    clients: [
      {
        client_id: 'orders-web',
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${baseUrl}/signin-oidc`],
        post_logout_redirect_uris: [`${baseUrl}/signed-out`],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read',
        skip_consent: true,
        backchannel_logout_uri: `${baseUrl}/backchannel-logout`,
      },
    ],
    resources: [
      {
        id: 'orders-api',
        scopes: ['orders.read'],
        access_token_format: 'jwt',
        secret: randomBytes(24).toString('base64url'),
      },
    ],
    users: users.map((entry) => ({ ...entry, name: entry.username })),
  };
}

beforeAll(async () => {
  if (!postgres) return;
  const port = await findFreePort();
  baseUrl = `http://127.0.0.1:${port}`;
  auth = await startAuthServer(seed([ALICE, BOB, CAROL, DAVE, ERIN]), { postgres: true });
  database = await createTestDatabase();
  orders = await buildApp(
    testConfig({
      PORT: String(port),
      BASE_URL: baseUrl,
      OIDC_ISSUER: auth.issuer,
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_SCOPES: 'openid profile email offline_access orders.read',
      SESSION_SECRET: randomBytes(32).toString('base64url'),
    }),
    { database: database.handle },
  );
  await orders.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await orders?.close();
  await auth?.stop();
  await database?.dispose();
});

/** A browser signed in to the orders app as `who`; `/bff/user` answers for them. */
async function signedInToOrders(who: typeof ALICE): Promise<TestBrowser> {
  const browser = new TestBrowser();
  const { callback } = await signInThroughCallback(browser, { appUrl: baseUrl, user: who });
  expect(callback.status).toBe(303);
  expect(await bffUserStatus(browser)).toBe(200);
  return browser;
}

const bffUserStatus = async (browser: TestBrowser) =>
  (await browser.request(`${baseUrl}/bff/user`, { headers: { 'x-csrf': '1' } })).status;

/** Polls for up to 10 s: the logout token is delivered after the provider has answered. */
async function signedOutOfOrders(browser: TestBrowser): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if ((await bffUserStatus(browser)) === 401) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Signs in to the provider's account page with a password, in a browser of its own. */
async function signedInToAccount(who: typeof ALICE): Promise<TestBrowser> {
  const browser = new TestBrowser();
  const { response, url } = await browser.follow(`${auth.issuer}/account`);
  const login = readPostForm(await response.text());
  const posted = await browser.request(url, {
    method: 'POST',
    form: { ...login.hidden, username: who.username, password: who.password },
  });
  expect(new URL(posted.headers.get('location')!, url).pathname).toBe('/account');
  return browser;
}

async function accountPage(browser: TestBrowser): Promise<{ status: number; body: string }> {
  const response = await browser.request(`${auth.issuer}/account`);
  return { status: response.status, body: await response.text() };
}

describe.runIf(postgres)('the provider ends a user’s sessions: this app’s session ends too', () => {
  it('a password change on the account page in another browser signs the user out here; that browser stays', async () => {
    const shopping = await signedInToOrders(ALICE);
    const settings = await signedInToAccount(ALICE);
    // The password form's token (the page's "Sign out" form carries a token of its own).
    const csrf =
      /action="[^"]*\/account\/password"[^>]*><input type="hidden" name="csrf" value="([^"]+)"/.exec(
        (await accountPage(settings)).body,
      )![1]!;
    const changed = await settings.request(`${auth.issuer}/account/password`, {
      method: 'POST',
      form: {
        csrf,
        current_password: ALICE.password,
        new_password: 'a-much-better-passphrase',
        confirm_password: 'a-much-better-passphrase',
      },
    });
    // Post/redirect/get: the result is at the GET address the 303 names.
    expect(changed.status).toBe(303);
    const result = await settings.follow(new URL(changed.headers.get('location')!, auth.issuer));
    expect(result.response.status).toBe(200);
    expect(await result.response.text()).toContain('Signed out of 1 other session.');

    expect(await signedOutOfOrders(shopping)).toBe(true);
    expect((await accountPage(settings)).status).toBe(200);
  });

  it('users disable (a separate process) signs the user out here', async () => {
    const browser = await signedInToOrders(BOB);
    const other = await signedInToOrders(CAROL);
    const run = await auth.users(['disable', 'bob']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('disabled bob; ended 1 session(s), revoked 1 grant(s)\n');
    // The command waited for the delivery before it exited.
    expect(run.stderr).toContain(
      `users: back-channel logout delivered: orders-web ${baseUrl}/backchannel-logout`,
    );
    expect(await signedOutOfOrders(browser)).toBe(true);
    expect(await bffUserStatus(other)).toBe(200);
  });

  it('users reset-password and reset-mfa sign the user out here', async () => {
    const carol = await signedInToOrders(CAROL);
    const reset = await auth.users(['reset-password', 'carol'], 'carol-amber-glacier-77\n');
    expect(reset.code).toBe(0);
    expect(await signedOutOfOrders(carol)).toBe(true);

    const dave = await signedInToOrders(DAVE);
    expect((await auth.users(['reset-mfa', 'dave'])).code).toBe(0);
    expect(await signedOutOfOrders(dave)).toBe(true);
  });

  it('a restart whose seed no longer names the user signs them out here', async () => {
    const erin = await signedInToOrders(ERIN);
    const stays = await signedInToOrders(DAVE);
    await auth.restart(seed([ALICE, BOB, CAROL, DAVE]));
    expect(await signedOutOfOrders(erin)).toBe(true);
    expect(await bffUserStatus(stays)).toBe(200);
  });
});
