import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { sessions } from '../src/db/schema.js';
import { deriveKey } from '../src/oidc/keys.js';
import { type SessionTokens, unsealTokens } from '../src/oidc/token-sealing.js';
import { TEST_API_KEY, testConfig, withApiKey } from './helpers/app.js';
import { type AuthServerProcess, startAuthServer } from './helpers/auth-server.js';
import { TestBrowser } from './helpers/browser.js';
import { countRows, createTestDatabase, type TestDatabase } from './helpers/database.js';
import { findFreePort } from './helpers/server-process.js';
import { type SignInOptions, signInThroughCallback, signInUpToFormPost } from './helpers/sign-in.js';

/**
 * The whole sign-in against the real authorization server (apps/auth-server as a child process),
 * driven by plain HTTP as a browser would: the orders app is a relying party (confidential client
 * `orders-web`), a BFF and the resource server `orders-api` its own BFF calls.
 */

const CLIENT_SECRET = randomBytes(24).toString('base64url');
const RESOURCE_SECRET = randomBytes(24).toString('base64url');
const WORKER_SECRET = randomBytes(24).toString('base64url');
const SESSION_SECRET = randomBytes(32).toString('base64url');
const ALICE = { sub: 'u-alice', username: 'alice', password: randomBytes(12).toString('base64url') };
const BOB = { sub: 'u-bob', username: 'bob', password: randomBytes(12).toString('base64url') };
/**
 * Short, so refresh can be watched without a test clock. With TOKEN_REFRESH_SKEW_SECONDS=1 a token
 * is due 5 s after issue: long enough that twenty parallel calls on a loaded machine all start
 * while the refreshed token is still fresh.
 */
const ACCESS_TOKEN_TTL = 6;
const SESSION_TTL_SECONDS = 7200;
/** The host a gateway in front of the orders app would forward (TRUST_PROXY tests). */
const GATEWAY = 'https://shop.example.test';

let auth: AuthServerProcess;
let database: TestDatabase;
let baseUrl: string;
let orders: FastifyInstance;
let environment: Record<string, string>;
const logLines: string[] = [];

beforeAll(async () => {
  const ordersPort = await findFreePort();
  baseUrl = `http://127.0.0.1:${ordersPort}`;
  auth = await startAuthServer({
    clients: [
      {
        client_id: 'orders-web',
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${baseUrl}/signin-oidc`, `${GATEWAY}/signin-oidc`],
        post_logout_redirect_uris: [`${baseUrl}/signed-out`, `${GATEWAY}/signed-out`],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read orders.write',
        skip_consent: true,
        backchannel_logout_uri: `${baseUrl}/backchannel-logout`,
      },
      {
        client_id: 'worker',
        client_secret: WORKER_SECRET,
        grant_types: ['client_credentials'],
        scope: 'orders.read orders.write audit.read billing.read',
      },
    ],
    resources: [
      {
        id: 'orders-api',
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: ACCESS_TOKEN_TTL,
        secret: RESOURCE_SECRET,
        claims: ['email'],
      },
      {
        id: 'audit-api',
        scopes: ['audit.read'],
        access_token_format: 'opaque',
        secret: 'audit-secret-0123456789',
      },
    ],
    users: [
      {
        sub: ALICE.sub,
        username: ALICE.username,
        password: ALICE.password,
        name: 'Alice Example',
        email: 'alice@example.com',
      },
      {
        sub: BOB.sub,
        username: BOB.username,
        password: BOB.password,
        name: 'Bob Example',
        email: 'bob@example.com',
      },
    ],
  });
  database = await createTestDatabase();
  environment = {
    // trace: the log-secrets test below searches everything this app can write.
    LOG_LEVEL: 'trace',
    PORT: String(ordersPort),
    BASE_URL: baseUrl,
    OIDC_ISSUER: auth.issuer,
    OIDC_CLIENT_ID: 'orders-web',
    OIDC_CLIENT_SECRET: CLIENT_SECRET,
    SESSION_SECRET,
    SESSION_TTL_SECONDS: String(SESSION_TTL_SECONDS),
    TOKEN_REFRESH_SKEW_SECONDS: '1',
    RESOURCE_ID: 'orders-api',
    RESOURCE_SECRET,
  };
  orders = await buildApp(testConfig(environment), {
    database: database.handle,
    logStream: { write: (line) => void logLines.push(line) },
  });
  await orders.listen({ port: ordersPort, host: '127.0.0.1' });
});
afterAll(async () => {
  await orders?.close();
  await auth?.stop();
  await database?.dispose();
});
beforeEach(async () => {
  await database.reset();
});

function formPostPage(browser: TestBrowser, options: Partial<SignInOptions> = {}) {
  return signInUpToFormPost(browser, { appUrl: baseUrl, user: ALICE, ...options });
}

function signIn(browser: TestBrowser, options: Partial<SignInOptions> = {}) {
  return signInThroughCallback(browser, { appUrl: baseUrl, user: ALICE, ...options });
}

async function onlySession() {
  const rows = await database.handle.db.select().from(sessions);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

async function sessionTokens(): Promise<SessionTokens> {
  return unsealTokens((await onlySession()).tokens, deriveKey(SESSION_SECRET, 'session tokens'));
}

/** Waits (without asserting on time) until the session's access token is due for refresh or expired. */
async function waitUntilPast(column: 'accessTokenRefreshAt' | 'accessTokenExpiresAt') {
  const due = (await onlySession())[column]!.getTime();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 50));
}

async function sessionsOf(sub: string): Promise<number> {
  return (await database.handle.db.select().from(sessions).where(eq(sessions.sub, sub))).length;
}

async function sessionTokensOf(sub: string): Promise<SessionTokens> {
  const [row] = await database.handle.db.select().from(sessions).where(eq(sessions.sub, sub));
  return unsealTokens(row!.tokens, deriveKey(SESSION_SECRET, 'session tokens'));
}

/** Polls `condition` for up to 10 s (a delivery the provider makes after answering the browser). */
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition()) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

function bffGet(browser: TestBrowser, path: string, csrf = true) {
  return browser.request(`${baseUrl}${path}`, { headers: csrf ? { 'x-csrf': '1' } : {} });
}

const refreshCount = () => logLines.filter((line) => line.includes('"msg":"access token refreshed"')).length;

async function placeOrder(email: string, quantity: number) {
  const response = await fetch(`${baseUrl}/orders`, {
    method: 'POST',
    headers: { ...withApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ email, quantity }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: number };
}

function cookieAttributes(header: string): string[] {
  return header.split(';').map((part) => part.trim().toLowerCase());
}

describe('sign-in', () => {
  it('redirect parameters, login form, form_post callback, session cookie, GET /', async () => {
    const browser = new TestBrowser();

    const { authorizationUrl, loginInputs, formPost, callback } = await signIn(browser, {
      path: '/login?returnUrl=%2F%3Fafter%3Dsignin',
    });

    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${auth.issuer}/authorize`);
    const query = authorizationUrl.searchParams;
    expect(query.get('response_type')).toBe('code');
    expect(query.get('client_id')).toBe('orders-web');
    expect(query.get('redirect_uri')).toBe(`${baseUrl}/signin-oidc`);
    expect(query.get('response_mode')).toBe('form_post');
    expect(query.get('scope')).toBe('openid profile email offline_access orders.read');
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get('state')).toBeTruthy();
    expect(query.get('nonce')).toBeTruthy();

    expect(loginInputs).toEqual(expect.arrayContaining(['username', 'password']));
    expect(formPost.action).toBe(`${baseUrl}/signin-oidc`);
    expect(Object.keys(formPost.hidden)).toEqual(expect.arrayContaining(['code', 'state', 'iss']));

    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/?after=signin');
    const sessionCookie = browser.setCookieHeaders.find((header) =>
      header.startsWith('__Host-orders-session='),
    );
    const attributes = cookieAttributes(sessionCookie!);
    expect(attributes).toEqual(
      expect.arrayContaining([
        'secure',
        'httponly',
        'path=/',
        'samesite=lax',
        `max-age=${SESSION_TTL_SECONDS}`,
      ]),
    );
    expect(attributes.some((attribute) => attribute.startsWith('domain='))).toBe(false);
    // The correlation cookie is single-use.
    expect(browser.cookieNames().filter((name) => name.startsWith('__Host-orders-correlation-'))).toEqual([]);

    const home = await browser.request(`${baseUrl}/?after=signin`);
    expect(home.status).toBe(200);
    expect(await home.json()).toEqual({ name: 'Alice Example', sub: ALICE.sub, hasAccessToken: true });
    // A person opening / lands on the orders app, not on this JSON.
    const homeInBrowser = await browser.request(`${baseUrl}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(homeInBrowser.status).toBe(303);
    expect(homeInBrowser.headers.get('location')).toBe('/app');

    const row = await onlySession();
    expect(row.sub).toBe(ALICE.sub);
    expect(row.sid).toEqual(expect.any(String));
    // The session's lifetime is the store's (SESSION_TTL_SECONDS), not the ID token's.
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(SESSION_TTL_SECONDS * 1000);
    // Claim names as issued; protocol claims left out; the cookie is only an opaque key.
    expect(row.claims).toMatchObject({ sub: ALICE.sub, name: 'Alice Example', email: 'alice@example.com' });
    expect(row.claims).not.toHaveProperty('nonce');
    expect(row.claims).not.toHaveProperty('aud');
    const tokens = await sessionTokens();
    expect(tokens.accessToken).toMatch(/^ey/);
    expect(row.tokens).not.toContain(tokens.accessToken!);
    expect(browser.cookie('__Host-orders-session')).not.toContain('.');
  });

  it('a second instance sharing SESSION_SECRET and the store serves the same session', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const other = await buildApp(testConfig({ ...environment, LOG_LEVEL: 'silent' }), {
      database: database.handle,
    });
    try {
      const home = await other.inject({
        method: 'GET',
        url: '/',
        headers: { cookie: browser.cookieHeader() },
      });

      expect(home.statusCode).toBe(200);
      expect(home.json().sub).toBe(ALICE.sub);
    } finally {
      await other.close();
    }
  });
});

describe('logs: no secret or personal data', () => {
  it('at trace, after every flow, carry no secret, password, code, token, API key or cookie value the test saw', async () => {
    const seen = new Set<string>([
      CLIENT_SECRET,
      RESOURCE_SECRET,
      SESSION_SECRET,
      ALICE.password,
      TEST_API_KEY,
    ]);
    // Sign-in (code, state, correlation and session cookies) and the BFF (user, orders, placing one).
    const browser = new TestBrowser();
    const { formPost } = await signIn(browser);
    for (const name of ['code', 'state', 'session_state', 'iss'] as const) {
      const value = formPost.hidden[name];
      if (value && name !== 'iss') seen.add(value);
    }
    for (const header of browser.setCookieHeaders)
      seen.add(header.split(';')[0]!.split('=').slice(1).join('='));
    const tokens = await sessionTokens();
    for (const token of [tokens.accessToken, tokens.refreshToken, tokens.idToken]) seen.add(token!);
    const user = await bffGet(browser, '/bff/user');
    const { signOutToken } = (await user.json()) as { signOutToken: string };
    seen.add(signOutToken);
    await bffGet(browser, '/bff/orders');
    await browser.request(`${baseUrl}/bff/orders`, {
      method: 'POST',
      json: { quantity: 1 },
      headers: { 'x-csrf': '1' },
    });
    // Order placement with the API key; the bearer API; DPoP scheme with a (refused) proof.
    await fetch(`${baseUrl}/orders`, {
      method: 'POST',
      headers: { ...withApiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', quantity: 1 }),
    });
    await fetch(`${baseUrl}/orders`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    const proof = `${Buffer.from('{"typ":"dpop+jwt","alg":"ES256"}').toString('base64url')}.e30.${randomBytes(64).toString('base64url')}`;
    seen.add(proof);
    await fetch(`${baseUrl}/orders`, {
      headers: { authorization: `DPoP ${tokens.accessToken}`, dpop: proof },
    });
    // Secrets in query strings, as clients wrongly send them, on a known and an unknown route.
    const query = new URLSearchParams({
      id_token_hint: tokens.idToken!,
      client_secret: CLIENT_SECRET,
      code: formPost.hidden.code!,
      token: tokens.accessToken!,
      refresh_token: tokens.refreshToken!,
      login_hint: 'alice@example.com',
    });
    seen.add('alice@example.com');
    await browser.request(`${baseUrl}/login?${query}`);
    await browser.request(`${baseUrl}/no-such-page?${query}`);
    await fetch(`${baseUrl}/orders/1?${query}`, {
      headers: { authorization: `Bearer ${tokens.refreshToken}` },
    });
    // Sign-out (POST with the CSRF token), then back-channel logout of a second sign-in.
    await browser.request(`${baseUrl}/logout`, { method: 'POST', form: { csrf: signOutToken } });
    const again = new TestBrowser();
    await signIn(again);
    const second = await sessionTokensOf(ALICE.sub);
    for (const token of [second.accessToken, second.refreshToken, second.idToken]) seen.add(token!);
    for (const header of again.setCookieHeaders)
      seen.add(header.split(';')[0]!.split('=').slice(1).join('='));
    await again.request(`${auth.issuer}/logout?${new URLSearchParams({ id_token_hint: second.idToken! })}`);
    await waitFor(async () => (await sessionsOf(ALICE.sub)) === 0);

    const written = logLines.join('');
    expect(orders.log.level).toBe('trace');
    expect(written).toContain('signed in');
    for (const secret of [...seen].filter((value) => value.length >= 8)) {
      expect(written, `a log line carries a value the test saw (${secret.slice(0, 6)}…)`).not.toContain(
        secret,
      );
    }
  });
});

describe('OIDC_FETCH_USERINFO', () => {
  it('reads UserInfo after the code exchange and keeps the claims as issued', async () => {
    const port = await findFreePort();
    const lines: string[] = [];
    const withUserInfo = await buildApp(
      testConfig({ ...environment, PORT: String(port), OIDC_FETCH_USERINFO: 'true', BASE_URL: baseUrl }),
      { database: database.handle, logStream: { write: (line) => void lines.push(line) } },
    );
    await withUserInfo.listen({ port, host: '127.0.0.1' });
    try {
      const browser = new TestBrowser();
      // BASE_URL is the main app's, so the registered redirect URI is used; the callback goes here.
      const { callback } = await signIn(browser, { appUrl: `http://127.0.0.1:${port}` });

      expect(callback.status).toBe(303);
      const userInfoLine = lines.find((line) => line.includes('"msg":"UserInfo read"'));
      expect(userInfoLine).toBeDefined();
      expect(JSON.parse(userInfoLine!).claimNames).toEqual(expect.arrayContaining(['sub', 'name', 'email']));
      expect((await onlySession()).claims).toMatchObject({ sub: ALICE.sub, name: 'Alice Example' });
    } finally {
      await withUserInfo.close();
    }
  });

  it('is off by default: the main app never calls UserInfo', async () => {
    const browser = new TestBrowser();
    await signIn(browser);

    expect(logLines.some((line) => line.includes('"msg":"UserInfo read"'))).toBe(false);
  });
});

describe('callback failures', () => {
  it('missing correlation cookie: 400 "correlation failed", no session', async () => {
    const browser = new TestBrowser();
    const { formPost } = await formPostPage(browser);
    for (const name of browser.cookieNames()) {
      if (name.startsWith('__Host-orders-correlation-')) browser.deleteCookie(name);
    }

    const callback = await browser.request(`${baseUrl}/signin-oidc`, {
      method: 'POST',
      form: formPost.hidden,
    });

    expect(callback.status).toBe(400);
    const page = await callback.text();
    expect(page).toContain('correlation failed');
    // The /app look, the reason folded away, a way on to /app.
    expect(page).toContain('href="/app/app.css"');
    expect(page).toContain('<details class="detail">');
    expect(page).toContain('href="/app"');
    expect(browser.cookie('__Host-orders-session')).toBeUndefined();
    expect(await countRows(database, 'sessions')).toBe(0);
  });

  it('a wrong OIDC_CLIENT_SECRET: a page for the person, a log line naming the variable for the operator', async () => {
    const browser = new TestBrowser();
    const { formPost } = await formPostPage(browser);
    const lines: string[] = [];
    const other = await buildApp(
      testConfig({ ...environment, OIDC_CLIENT_SECRET: `${CLIENT_SECRET}-wrong` }),
      {
        database: database.handle,
        logStream: { write: (line) => void lines.push(line) },
      },
    );
    try {
      await other.ready();
      await waitFor(async () => other.oidc.status === 'ready');
      const callback = await other.inject({
        method: 'POST',
        url: '/signin-oidc',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: browser.cookieHeader() },
        payload: new URLSearchParams(formPost.hidden).toString(),
      });
      expect(callback.statusCode, callback.body.slice(0, 3000)).toBe(502);
      expect(callback.headers['content-type']).toBe('text/html; charset=utf-8');
      const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(logged.some((line) => line.level === 50 && line.msg.includes('check OIDC_CLIENT_SECRET'))).toBe(
        true,
      );
      expect(lines.join('\n')).not.toContain(CLIENT_SECRET);
      expect(await countRows(database, 'sessions')).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('a state protected by another SESSION_SECRET (misconfigured instance): 400 "unable to unprotect state"', async () => {
    const browser = new TestBrowser();
    const { formPost } = await formPostPage(browser);
    const other = await buildApp(
      testConfig({ ...environment, LOG_LEVEL: 'silent', SESSION_SECRET: `${SESSION_SECRET}-other` }),
      { database: database.handle },
    );
    try {
      const callback = await other.inject({
        method: 'POST',
        url: '/signin-oidc',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: browser.cookieHeader() },
        payload: new URLSearchParams(formPost.hidden).toString(),
      });

      expect(callback.statusCode).toBe(400);
      expect(callback.body).toContain('unable to unprotect state');
      expect(await countRows(database, 'sessions')).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('another instance with the same SESSION_SECRET completes a sign-in this one started', async () => {
    const browser = new TestBrowser();
    const { formPost } = await formPostPage(browser);
    const other = await buildApp(testConfig({ ...environment, LOG_LEVEL: 'silent' }), {
      database: database.handle,
    });
    try {
      const callback = await other.inject({
        method: 'POST',
        url: '/signin-oidc',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: browser.cookieHeader() },
        payload: new URLSearchParams(formPost.hidden).toString(),
      });

      expect(callback.statusCode).toBe(303);
      expect(await countRows(database, 'sessions')).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('the same form_post response replayed after success: 400 (its correlation cookie is spent), no second session', async () => {
    const browser = new TestBrowser();
    const { formPost, callback } = await signIn(browser);
    expect(callback.status).toBe(303);

    const replay = await browser.request(`${baseUrl}/signin-oidc`, { method: 'POST', form: formPost.hidden });

    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('correlation failed');
    expect(await countRows(database, 'sessions')).toBe(1);
  });
});

describe('BFF against the real authorization server', () => {
  it('X-CSRF is required; GET /bff/orders returns only my orders through GET /orders with my token', async () => {
    const mine = await placeOrder('alice@example.com', 2);
    await placeOrder('bob@example.com', 5);
    const browser = new TestBrowser();
    await signIn(browser);

    const withoutCsrf = await bffGet(browser, '/bff/orders', false);
    const response = await bffGet(browser, '/bff/orders');

    expect(withoutCsrf.status).toBe(400);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as { id: number; total: string }[];
    expect(body.map((order) => order.id)).toEqual([mine.id]);
    expect(body[0]!.total).toBe('19.98');
  });

  it('GET /bff/user and POST /bff/orders act for the signed-in user', async () => {
    const browser = new TestBrowser();
    await signIn(browser, { user: BOB });

    const user = await bffGet(browser, '/bff/user');
    const placed = await browser.request(`${baseUrl}/bff/orders`, {
      method: 'POST',
      headers: { 'x-csrf': '1' },
      json: { quantity: 4 },
    });
    const list = await bffGet(browser, '/bff/orders');

    expect(await user.json()).toMatchObject({
      sub: BOB.sub,
      name: 'Bob Example',
      claims: { email: 'bob@example.com' },
    });
    expect(placed.status).toBe(201);
    expect(await placed.json()).toMatchObject({ email: 'bob@example.com', quantity: 4, status: 'created' });
    expect(((await list.json()) as unknown[]).length).toBe(1);
  });

  it('refreshes the access token after it expires (short lifetime) and the API accepts the new one', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const before = await sessionTokens();
    const refreshesBefore = refreshCount();
    await waitUntilPast('accessTokenExpiresAt');

    const response = await bffGet(browser, '/bff/orders');

    expect(response.status).toBe(200);
    expect(refreshCount()).toBe(refreshesBefore + 1);
    const after = await sessionTokens();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    // The expired token itself is refused by the API.
    const stale = await fetch(`${baseUrl}/orders`, {
      headers: { authorization: `Bearer ${before.accessToken}` },
    });
    expect(stale.status).toBe(401);
    expect(stale.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('twenty parallel BFF calls share one refresh, and the rotated refresh token keeps working', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    await waitUntilPast('accessTokenRefreshAt');
    const refreshesBefore = refreshCount();

    const responses = await Promise.all(Array.from({ length: 20 }, () => bffGet(browser, '/bff/orders')));

    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(refreshCount()).toBe(refreshesBefore + 1);
    // Had two refreshes used the same token, reuse detection would have revoked the grant.
    await waitUntilPast('accessTokenRefreshAt');
    expect((await bffGet(browser, '/bff/orders')).status).toBe(200);
    expect(refreshCount()).toBe(refreshesBefore + 2);
    expect(await countRows(database, 'sessions')).toBe(1);
  });
});

describe('logout', () => {
  it('GET /logout deletes the session and cookie, revokes the refresh token, ends the provider session', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const { refreshToken, idToken } = await sessionTokens();

    const logout = await browser.request(`${baseUrl}/logout`);

    expect(logout.status).toBe(302);
    const endSession = new URL(logout.headers.get('location')!);
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${auth.issuer}/logout`);
    expect(endSession.searchParams.get('id_token_hint')).toBe(idToken);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${baseUrl}/signed-out`);
    expect(browser.cookie('__Host-orders-session')).toBeUndefined();
    expect(await countRows(database, 'sessions')).toBe(0);

    const back = await browser.request(endSession);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(`${baseUrl}/signed-out`);

    // The refresh token no longer works.
    const rp = await client.discovery(new URL(auth.issuer), 'orders-web', CLIENT_SECRET, undefined, {
      execute: [client.allowInsecureRequests],
    });
    await expect(client.refreshTokenGrant(rp, refreshToken!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    // Signing in again needs the login form: the provider's session ended too.
    const again = await signIn(browser);
    expect(again.loginInputs).toEqual(expect.arrayContaining(['username', 'password']));
  });

  it('back-channel logout: a logout token not signed by the provider is refused (400)', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const { idToken } = await sessionTokens();

    // An ID token is signed by the provider but is not a logout token (nonce, no events claim).
    const response = await fetch(`${baseUrl}/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: idToken! }).toString(),
    });

    expect(response.status).toBe(400);
    expect(await countRows(database, 'sessions')).toBe(1);
  });
});

describe('back-channel logout from the provider', () => {
  it("logging out at the provider ends this app's session for that sid (logout token delivered)", async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const other = new TestBrowser();
    await signIn(other, { user: BOB });
    const { idToken } = await sessionTokensOf(ALICE.sub);

    // RP-Initiated Logout straight at the provider, not through this app: only the provider's
    // back-channel call can tell this app.
    const endSession = new URL(`${auth.issuer}/logout`);
    endSession.searchParams.set('id_token_hint', idToken!);
    const loggedOut = await browser.request(endSession);
    expect(loggedOut.status).toBeLessThan(500);
    await waitFor(async () => (await sessionsOf(ALICE.sub)) === 0);

    expect(await sessionsOf(ALICE.sub)).toBe(0);
    expect(await sessionsOf(BOB.sub)).toBe(1);
    expect((await browser.request(`${baseUrl}/`)).status).toBe(302);
  });
});

describe('forwarded headers', () => {
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': new URL(GATEWAY).host };

  it('without TRUST_PROXY they are ignored: the redirect URI stays BASE_URL/signin-oidc', async () => {
    const browser = new TestBrowser();
    const start = await browser.request(`${baseUrl}/`, { headers: forwarded });

    expect(new URL(start.headers.get('location')!).searchParams.get('redirect_uri')).toBe(
      `${baseUrl}/signin-oidc`,
    );
  });

  it('with TRUST_PROXY the whole sign-in runs on the public https origin the gateway forwards', async () => {
    const port = await findFreePort();
    const appUrl = `http://127.0.0.1:${port}`;
    const proxied = await buildApp(
      testConfig({ ...environment, LOG_LEVEL: 'silent', PORT: String(port), TRUST_PROXY: 'true' }),
      {
        database: database.handle,
      },
    );
    await proxied.listen({ port, host: '127.0.0.1' });
    try {
      const browser = new TestBrowser();
      const { authorizationUrl, formPost, callback } = await signIn(browser, { appUrl, headers: forwarded });

      expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${GATEWAY}/signin-oidc`);
      expect(formPost.action).toBe(`${GATEWAY}/signin-oidc`);
      expect(callback.status).toBe(303);
      const home = await browser.request(`${appUrl}/`, { headers: forwarded });
      expect(home.status).toBe(200);
      const logout = await browser.request(`${appUrl}/logout`, { headers: forwarded });
      expect(new URL(logout.headers.get('location')!).searchParams.get('post_logout_redirect_uri')).toBe(
        `${GATEWAY}/signed-out`,
      );
    } finally {
      await proxied.close();
    }
  });
});

describe('bearer tokens from the real authorization server', () => {
  async function workerToken(scope: string): Promise<string> {
    const worker = await client.discovery(new URL(auth.issuer), 'worker', WORKER_SECRET, undefined, {
      execute: [client.allowInsecureRequests],
    });
    return (await client.clientCredentialsGrant(worker, { scope })).access_token;
  }

  async function listWith(token: string) {
    return fetch(`${baseUrl}/orders`, { headers: { authorization: `Bearer ${token}` } });
  }

  it("the user's JWT access token reads their orders; GET /orders/:id only for their own", async () => {
    const mine = await placeOrder('alice@example.com', 1);
    const theirs = await placeOrder('bob@example.com', 1);
    const browser = new TestBrowser();
    await signIn(browser);
    const { accessToken } = await sessionTokens();

    const list = await listWith(accessToken!);
    const own = await fetch(`${baseUrl}/orders/${mine.id}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    const foreign = await fetch(`${baseUrl}/orders/${theirs.id}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });

    expect(list.status).toBe(200);
    expect(((await list.json()) as { id: number }[]).map((order) => order.id)).toEqual([mine.id]);
    expect(own.status).toBe(200);
    expect(foreign.status).toBe(404);
  });

  it('the ID token is refused: 401 invalid_token', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const { idToken } = await sessionTokens();

    const response = await listWith(idToken!);

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('the refresh token (opaque, introspected as orders-api) is refused: 401 invalid_token', async () => {
    const browser = new TestBrowser();
    await signIn(browser);
    const { refreshToken } = await sessionTokens();

    const response = await listWith(refreshToken!);

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('an opaque token for another audience (audit-api) is refused after introspection: 401', async () => {
    const response = await listWith(await workerToken('audit.read'));

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a JWT for another audience (billing-api) is refused: 401 invalid_token', async () => {
    const response = await listWith(await workerToken('billing.read'));

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a JWT for this API without orders.read: 403 insufficient_scope', async () => {
    const response = await listWith(await workerToken('orders.write'));

    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  it('a JWT for this API that names no user (client credentials, no email): 401 invalid_token', async () => {
    const response = await listWith(await workerToken('orders.read'));

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
