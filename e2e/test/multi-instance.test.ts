import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBrowser } from '../src/http-browser.js';
import {
  basicAuthorization,
  type Instances,
  postForm,
  startInstances,
  WEB_TEST_REDIRECT_URI,
} from '../src/instances.js';
import { createFreshDatabase, type FreshDatabase } from '../src/postgres.js';
import { findFreePort, startNodeProcess } from '../src/processes.js';
import {
  approveDevice,
  authorizationCode,
  ordersSignIn,
  pollDevice,
  redeemCode,
  refresh,
} from '../src/protocol-flows.js';

/**
 * Many instances on one database: two auth-server and two orders processes, each pair on one
 * PostgreSQL database (fresh ones on TEST_DATABASE_URL's server, default the local one), with the
 * same keys and secrets. Every step names the instance it goes to. The last test reads the logs
 * of all four processes for every secret the flows used.
 */

let authDatabase: FreshDatabase;
let ordersDatabase: FreshDatabase;
let stack: Instances;
/** Codes, tokens and device codes the flows handled: none may appear in any log. */
const secretsUsed: string[] = [];
const browsers: HttpBrowser[] = [];

function newBrowser() {
  const browser = new HttpBrowser();
  browsers.push(browser);
  return browser;
}

beforeAll(async () => {
  authDatabase = await createFreshDatabase('e2e_multi_auth');
  ordersDatabase = await createFreshDatabase('e2e_multi_orders');
  stack = await startInstances({
    authDatabaseUrl: authDatabase.url,
    ordersDatabaseUrl: ordersDatabase.url,
    authCount: 2,
    ordersCount: 2,
    // Short, so the BFF test sees a refresh; refreshed when under half of it is left.
    accessTokenTtl: 6,
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await authDatabase?.drop();
  await ordersDatabase?.drop();
});

const webTest = () => ({ id: 'web-test', secret: stack.secrets.webTestClientSecret });
const [A, B] = [0, 1];

function collect(json: Record<string, unknown>) {
  for (const name of ['access_token', 'refresh_token', 'id_token']) {
    if (typeof json[name] === 'string') secretsUsed.push(json[name] as string);
  }
}

describe('two auth-server instances on one database', () => {
  it('publish the same JWKS and the same discovery document', async () => {
    const [first, second] = await Promise.all(
      stack.authUrls.map((url) => fetch(`${url}/jwks`).then((response) => response.json())),
    );
    expect(first.keys.length).toBeGreaterThanOrEqual(2);
    expect(second).toEqual(first);
    const discovery = await Promise.all(
      stack.authUrls.map((url) =>
        fetch(`${url}/.well-known/openid-configuration`).then((response) => response.json()),
      ),
    );
    expect(discovery[0].issuer).toBe(stack.issuer);
    expect(discovery[1]).toEqual(discovery[0]);
  });

  it('a code issued by instance A is redeemed at B, once', async () => {
    const code = await authorizationCode(newBrowser(), {
      authorizeAt: stack.authUrls[A]!,
      clientId: 'web-test',
      redirectUri: WEB_TEST_REDIRECT_URI,
      scope: 'openid profile offline_access orders.read',
      user: stack.user,
    });
    secretsUsed.push(code.code, code.verifier);
    const tokens = await redeemCode(stack.authUrls[B]!, webTest(), code, WEB_TEST_REDIRECT_URI);
    expect(tokens.status).toBe(200);
    expect(Object.keys(tokens.json)).toEqual(
      expect.arrayContaining(['access_token', 'refresh_token', 'id_token', 'token_type', 'expires_in']),
    );
    collect(tokens.json);

    // The access token is good at both instances (introspection as the API).
    for (const url of stack.authUrls) {
      const introspection = await postForm(
        `${url}/introspect`,
        { token: tokens.json.access_token as string },
        basicAuthorization('orders-api', stack.secrets.ordersApiSecret),
      );
      expect(introspection.json).toMatchObject({ active: true, sub: stack.user.sub, client_id: 'web-test' });
    }
    // RFC 6749 §4.1.2: single use, whichever instance sees it again.
    const again = await redeemCode(stack.authUrls[A]!, webTest(), code, WEB_TEST_REDIRECT_URI);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_grant');
  });

  it('ten parallel refreshes of one token, spread over both instances: exactly one succeeds', async () => {
    const code = await authorizationCode(newBrowser(), {
      authorizeAt: stack.authUrls[B]!,
      loginAt: stack.authUrls[A]!,
      clientId: 'web-test',
      redirectUri: WEB_TEST_REDIRECT_URI,
      scope: 'openid offline_access orders.read',
      user: stack.user,
    });
    const tokens = await redeemCode(stack.authUrls[A]!, webTest(), code, WEB_TEST_REDIRECT_URI);
    expect(tokens.status).toBe(200);
    collect(tokens.json);
    secretsUsed.push(code.code);
    const refreshToken = tokens.json.refresh_token as string;

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) => refresh(stack.authUrls[index % 2]!, webTest(), refreshToken)),
    );
    for (const answer of answers) collect(answer.json);
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(9);
    for (const answer of answers.filter((candidate) => candidate.status === 400)) {
      expect(answer.json.error).toBe('invalid_grant');
    }
  });

  it('a device code approved on A is polled from B, and redeemed once', async () => {
    const { deviceCode, userCode } = await approveDevice(newBrowser(), {
      authorizeAt: stack.authUrls[A]!,
      approveAt: stack.authUrls[A]!,
      clientId: 'cli',
      scope: 'openid offline_access orders.read',
      user: stack.user,
    });
    secretsUsed.push(deviceCode, userCode.replace('-', ''));
    const tokens = await pollDevice(stack.authUrls[B]!, 'cli', deviceCode);
    expect(tokens.status).toBe(200);
    expect(tokens.json.token_type).toBe('Bearer');
    collect(tokens.json);
    const refreshed = await postForm(`${stack.authUrls[A]}/token`, {
      grant_type: 'refresh_token',
      client_id: 'cli',
      refresh_token: tokens.json.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    collect(refreshed.json);
    const again = await pollDevice(stack.authUrls[A]!, 'cli', deviceCode);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_grant');
  });
});

describe('two orders instances on one database', () => {
  let browser: HttpBrowser;

  it('a sign-in started on orders-1 (provider pages on auth B) completes on orders-2; the session works on both', async () => {
    browser = newBrowser();
    const { callback, fields } = await ordersSignIn(browser, {
      startAt: stack.ordersUrls[A]!,
      authAt: stack.authUrls[B]!,
      finishAt: stack.ordersUrls[B]!,
      user: stack.user,
      returnUrl: '/',
    });
    secretsUsed.push(fields.code!);
    expect(callback.status).toBe(303);
    expect(callback.location?.pathname).toBe('/');
    expect(browser.cookie('__Host-orders-session')).toBeDefined();

    for (const url of stack.ordersUrls) {
      const home = await browser.get(`${url}/`);
      expect(home.status).toBe(200);
      expect(JSON.parse(home.body)).toEqual({
        name: 'Alice Example',
        sub: stack.user.sub,
        hasAccessToken: true,
      });
    }
  });

  it('an order placed on orders-1 (API key) is read on orders-2, and listed by the BFF after a token refresh', async () => {
    const placed = await fetch(`${stack.ordersUrls[A]}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.secrets.apiKey },
      body: JSON.stringify({ email: stack.user.email, quantity: 3 }),
    });
    expect(placed.status).toBe(201);
    const order = (await placed.json()) as { id: number };
    const read = await fetch(`${stack.ordersUrls[B]}/orders/${order.id}`, {
      headers: { 'x-api-key': stack.secrets.apiKey },
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: order.id, email: stack.user.email });

    // The 6-second access token is refreshed from 3 s before expiry on: wait past that, then the
    // BFF on either instance refreshes once (lease in the shared session row) and calls the API.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const lists = await Promise.all(
      [...stack.ordersUrls, ...stack.ordersUrls].map((url) =>
        fetch(`${url}/bff/orders`, {
          headers: {
            'x-csrf': '1',
            cookie: `__Host-orders-session=${browser.cookie('__Host-orders-session')}`,
          },
        }),
      ),
    );
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(await list.json()).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: order.id, quantity: 3 })]),
      );
    }
    // Exactly one refresh for the four concurrent calls on two instances.
    const refreshed = stack.orders.map(
      (handle) => handle.output().split('access token refreshed').length - 1,
    );
    expect(refreshed.reduce((sum, count) => sum + count, 0)).toBe(1);
    // The orders instances reached the provider through the gateway, which spread them over both.
    expect(Object.values(stack.gateway.connections()).every((count) => count > 0)).toBe(true);
  });
});

describe('a third auth-server instance with another KEY_ENCRYPTION_KEY', () => {
  it('refuses to start with a clear message, and never replaces the keys the others publish', async () => {
    const before = await fetch(`${stack.authUrls[A]}/jwks`).then((response) => response.json());
    const port = await findFreePort();
    const intruder = startNodeProcess('auth-server-wrong-kek', 'apps/auth-server', 'src/server.ts', {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      ISSUER: stack.issuer,
      DATABASE_URL: authDatabase.url,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'info',
    });
    try {
      expect(await intruder.exited).toBe(1);
    } finally {
      await intruder.stop();
    }
    expect(intruder.output()).toMatch(
      /^auth-server: cannot start: KEY_ENCRYPTION_KEY cannot decrypt signing key \S+ stored in the database/m,
    );
    for (const url of stack.authUrls) {
      expect(await fetch(`${url}/jwks`).then((response) => response.json())).toEqual(before);
    }
  });
});

describe('logs of all four processes', () => {
  it('carry the audit events of the flows and no password, secret, API key, cookie value, code or token', async () => {
    // Let the last lines of every process reach the pipes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const logs = stack.logs();
    for (const event of [
      'auth.login.succeeded',
      'auth.consent.granted',
      'auth.token.reuse_detected',
      'orders.signin.succeeded',
    ]) {
      expect(logs, event).toContain(`"event":"${event}"`);
    }
    const secrets = [
      ...stack.secretValues(),
      ...secretsUsed,
      ...browsers.flatMap((browser) => [...browser.cookieValuesSeen]),
    ].filter((value) => value.length >= 8);
    expect(secrets.length).toBeGreaterThan(25);
    for (const secret of secrets) {
      if (logs.includes(secret)) {
        const at = logs.indexOf(secret);
        throw new Error(`a secret is in the logs: …${logs.slice(Math.max(0, at - 200), at + 40)}…`);
      }
    }
  });
});
