import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { pkcePair } from './helpers/flows.js';
import { captureLogs, openLoginPage, submitLogin } from './helpers/security.js';
import { ORDERS_API, TEST_SECRETS, testSeed, WEB_REDIRECT_URI } from './helpers/seed.js';

/**
 * No token, secret or personal data in any log line, at any level. Every flow of
 * the auth server runs at level trace with the log captured (through the app's own logger
 * configuration); then the log is searched for every secret, password, code and token the test
 * saw. Sensitive values also travel in query strings here (an `id_token_hint` at /logout, a
 * `client_secret` at /token, a `user_code` at /device), where request logging used to print them.
 */

const GATEWAY_SECRET = 'gateway-secret-for-log-test-0123456789';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

function seed(): SeedDocument {
  const base = testSeed();
  return {
    ...base,
    clients: [
      ...(base.clients ?? []),
      { client_id: 'tv', grant_types: [DEVICE, 'refresh_token'], scope: 'openid offline_access orders.read' },
      {
        client_id: 'gateway',
        client_secret: GATEWAY_SECRET,
        grant_types: [EXCHANGE],
        token_exchange: { audiences: [ORDERS_API], scopes: ['openid', 'orders.read'] },
      },
    ],
  };
}

let app: TestApp;
let close: () => Promise<void>;
const logs = captureLogs('trace');
/** Every secret value the test sends or receives. */
const seen = new Set<string>([...Object.values(TEST_SECRETS), GATEWAY_SECRET]);
const see = (...values: unknown[]) => {
  for (const value of values) if (typeof value === 'string' && value.length >= 6) seen.add(value);
};

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: seed(), logger: logs.logger }));
});
afterAll(() => close());

const web = basicAuthorization('web', TEST_SECRETS.web);
const post = (url: string, payload: Record<string, string>, authorization?: string) =>
  app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, ...(authorization ? { authorization } : {}) },
    payload: form(payload),
  });

async function browserSignIn() {
  const { browser, page, verifier } = await openLoginPage(app, {
    scope: 'openid profile email offline_access orders.read',
  });
  // A wrong password first: the typed password must not be logged either.
  see('wrong-password-typed-by-alice');
  expect((await submitLogin(browser, page, 'alice', 'wrong-password-typed-by-alice')).statusCode).toBe(401);
  const retry = await openLoginPage(app, { scope: 'openid profile email offline_access orders.read' });
  const callback = await submitLogin(retry.browser, retry.page, 'alice', TEST_SECRETS.alicePassword);
  const final = callback.headers.location?.startsWith(WEB_REDIRECT_URI)
    ? callback
    : await retry.browser.follow(callback);
  const code = locationOf(final).searchParams.get('code');
  expect(code).toEqual(expect.any(String));
  see(code, retry.verifier, verifier, 'state-1', 'nonce-1');
  return { code: code!, verifier: retry.verifier, browser: retry.browser };
}

describe('log lines at level trace carry no secret', () => {
  it('every flow, then a search of the whole log', async () => {
    // Code + PKCE with a password sign-in, refresh, introspection, UserInfo, revocation.
    const { code, verifier, browser } = await browserSignIn();
    const tokens = (
      await post(
        '/token',
        { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT_URI, code_verifier: verifier },
        web,
      )
    ).json();
    see(tokens.access_token, tokens.refresh_token, tokens.id_token);
    const refreshed = (
      await post('/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, web)
    ).json();
    see(refreshed.access_token, refreshed.refresh_token, refreshed.id_token);
    expect(refreshed.access_token).toEqual(expect.any(String));
    const ordersApi = basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi);
    expect((await post('/introspect', { token: refreshed.access_token }, ordersApi)).json().active).toBe(
      true,
    );
    // Token exchange.
    const exchanged = await post(
      '/token',
      {
        grant_type: EXCHANGE,
        subject_token: refreshed.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: ORDERS_API,
        scope: 'orders.read',
      },
      basicAuthorization('gateway', GATEWAY_SECRET),
    );
    expect(exchanged.statusCode).toBe(200);
    see(exchanged.json().access_token);
    // A reused (rotated) refresh token: an error path, logged at info.
    expect(
      (await post('/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, web))
        .statusCode,
    ).toBe(400);

    const userInfo = await app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: `Bearer ${refreshed.access_token}` },
    });
    see(userInfo.json().email, userInfo.json().name);
    expect(
      (await post('/revoke', { token: refreshed.refresh_token, token_type_hint: 'refresh_token' }, web))
        .statusCode,
    ).toBe(200);
    // An access token in the query string of UserInfo (RFC 6750 §2.3, refused here) is not logged.
    await app.inject({ method: 'GET', url: `/userinfo?access_token=${refreshed.access_token}` });

    // Client credentials, with the secret in the body and (wrongly) in the query string.
    const service = await post('/token', {
      grant_type: 'client_credentials',
      client_id: 'service',
      client_secret: TEST_SECRETS.service,
      scope: 'orders.read',
    });
    see(service.json().access_token);
    await app.inject({
      method: 'POST',
      url: `/token?client_id=service&client_secret=${encodeURIComponent(TEST_SECRETS.service)}`,
      headers: FORM,
      payload: form({ grant_type: 'client_credentials' }),
    });

    // Device authorization: the user code in the verification URL's query, then polling.
    const device = (
      await post('/device_authorization', { client_id: 'tv', scope: 'openid orders.read' })
    ).json();
    see(device.device_code, device.user_code);
    const deviceBrowser = new TestBrowser(app);
    await deviceBrowser.get(`/device?user_code=${encodeURIComponent(device.user_code)}`);
    await post('/token', { grant_type: DEVICE, client_id: 'tv', device_code: device.device_code });

    // PAR, then /authorize with the request_uri.
    const { challenge } = pkcePair();
    const pushed = (
      await post(
        '/par',
        {
          client_id: 'web',
          response_type: 'code',
          redirect_uri: WEB_REDIRECT_URI,
          scope: 'openid',
          state: 'pushed-state-value',
          nonce: 'pushed-nonce-value',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          login_hint: 'alice@example.test',
        },
        web,
      )
    ).json();
    see(pushed.request_uri, 'pushed-state-value', 'pushed-nonce-value', 'alice@example.test', challenge);
    await browser.get(`/authorize?client_id=web&request_uri=${encodeURIComponent(pushed.request_uri)}`);

    // Logout with the ID token (name, e-mail) in the query string.
    see('logout-state-value');
    await browser.get(
      `/logout?${new URLSearchParams({ id_token_hint: refreshed.id_token ?? tokens.id_token, state: 'logout-state-value' })}`,
    );

    const text = logs.text();
    // The log really is at trace and covers the requests.
    expect(logs.lines().some((line) => line.msg === 'incoming request')).toBe(true);
    expect(text).toContain('/logout?');
    expect(text).toContain('/token?client_id=service&client_secret=[redacted]');
    for (const secret of seen) {
      expect(text.includes(secret), `log contains ${secret.slice(0, 12)}…`).toBe(false);
      expect(text.includes(encodeURIComponent(secret)), `log contains encoded ${secret.slice(0, 12)}…`).toBe(
        false,
      );
    }
    expect(seen.size).toBeGreaterThan(20);
  }, 60_000);
});
