import { createTestClock } from '@oidc-orders/oauth-core/testing';
import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_CONSENT_NOTICE } from '../src/routes/device.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { ALICE, BOB, signInSeed } from './sign-in-fixtures.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const TV_SECRET = 'tv-secret-for-tests-0123456789abcdef';
const CLI_SCOPE = 'openid profile email offline_access orders.read';

/** The sign-in seed plus a public CLI client and a confidential, skip_consent TV client. */
function deviceSeed(): SeedDocument {
  const seed = signInSeed();
  return {
    ...seed,
    clients: [
      ...(seed.clients ?? []),
      {
        client_id: 'cli',
        client_name: 'Orders <CLI>',
        grant_types: [DEVICE_GRANT, 'refresh_token'],
        scope: CLI_SCOPE,
      },
      {
        client_id: 'tv',
        client_name: 'Living-room TV',
        client_secret: TV_SECRET,
        grant_types: [DEVICE_GRANT],
        scope: 'openid profile',
        skip_consent: true,
      },
    ],
  };
}

// A test clock (starting now, so cookie expiry dates stay in the future) moves device codes past
// their expiry without waiting. Every test uses its own browser address, so the per-IP limit of
// one test never reaches another.
const clock = createTestClock(Math.floor(Date.now() / 1000));
let started: Awaited<ReturnType<typeof startTestApp>>;
let app: TestApp;
beforeAll(async () => {
  started = await startTestApp({ seed: deviceSeed(), clock });
  app = started.app;
});
afterAll(async () => {
  await started?.close();
});

let addressCounter = 0;
const newBrowser = () => new TestBrowser(app, { remoteAddress: `192.0.2.${++addressCounter}` });

function authorizeDevice(params: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/device_authorization',
    headers: { ...FORM, ...headers },
    payload: form(params),
  });
}

async function startCliDevice(scope = CLI_SCOPE) {
  const response = await authorizeDevice({ client_id: 'cli', scope });
  expect(response.statusCode).toBe(200);
  return response.json<{
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_in: number;
    interval: number;
  }>();
}

function poll(deviceCode: string, client: 'cli' | 'tv' = 'cli') {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, ...(client === 'tv' ? { authorization: basicAuthorization('tv', TV_SECRET) } : {}) },
    payload: form({
      grant_type: DEVICE_GRANT,
      device_code: deviceCode,
      ...(client === 'cli' ? { client_id: 'cli' } : {}),
    }),
  });
}

/** GET /device, then submit `userCode` with the page's hidden fields, as a browser would. */
async function enterCode(browser: TestBrowser, userCode: string) {
  const page = await browser.get('/device');
  return browser.post('/device', { ...hiddenFields(page.body), user_code: userCode });
}

interface Person {
  username: string;
  password: string;
}

async function signIn(browser: TestBrowser, loginPage: LightMyRequestResponse, user: Person = ALICE) {
  return browser.post(browser.lastUrl, {
    ...hiddenFields(loginPage.body),
    username: user.username,
    password: user.password,
  });
}

/** From a code-entry response to the consent page, signing in on the way when asked. */
async function reachConsent(browser: TestBrowser, afterCode: LightMyRequestResponse, user: Person = ALICE) {
  expect(afterCode.statusCode).toBe(303);
  let page = await browser.follow(afterCode);
  if (page.body.includes('name="password"')) page = await browser.follow(await signIn(browser, page, user));
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('name="decision"');
  return page;
}

function decide(browser: TestBrowser, consentPage: LightMyRequestResponse, decision: 'approve' | 'deny') {
  return browser.post(browser.lastUrl, { ...hiddenFields(consentPage.body), decision });
}

describe('device authorization endpoint (RFC 8628 §3.1–3.2)', () => {
  it('issues a device code to a public client identified by client_id', async () => {
    const response = await authorizeDevice({ client_id: 'cli', scope: CLI_SCOPE });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    expect(body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(body.verification_uri).toBe(`${TEST_ISSUER}/device`);
    expect(body.verification_uri_complete).toBe(
      `${TEST_ISSUER}/device?user_code=${encodeURIComponent(body.user_code)}`,
    );
    expect(body).toMatchObject({ expires_in: 600, interval: 5 });
  });

  it('authenticates confidential clients (Basic or client_secret_post)', async () => {
    const basic = await authorizeDevice(
      { scope: 'openid' },
      { authorization: basicAuthorization('tv', TV_SECRET) },
    );
    expect(basic.statusCode).toBe(200);
    const post = await authorizeDevice({ client_id: 'tv', client_secret: TV_SECRET, scope: 'openid' });
    expect(post.statusCode).toBe(200);
  });

  it.each([
    ['a confidential client without its secret', { client_id: 'tv', scope: 'openid' }, {}],
    ['a wrong secret', { scope: 'openid' }, { authorization: basicAuthorization('tv', 'wrong') }],
    ['an unknown client', { client_id: 'nobody', scope: 'openid' }, {}],
    ['no client at all', { scope: 'openid' }, {}],
  ])('401 invalid_client for %s', async (_case, params, headers) => {
    const response = await authorizeDevice(params, headers);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: 'invalid_client' });
    expect(response.headers['www-authenticate']).toMatch(/^Basic /);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it.each([
    ['a client not allowed the device grant', { client_id: 'spa', scope: 'openid' }, 'unauthorized_client'],
    ['no scope', { client_id: 'cli' }, 'invalid_scope'],
    ['a scope the client may not have', { client_id: 'cli', scope: 'openid orders.write' }, 'invalid_scope'],
    [
      'an unknown resource',
      { client_id: 'cli', scope: 'openid', resource: 'https://x.example' },
      'invalid_target',
    ],
  ])('400 for %s', async (_case, params, error) => {
    const response = await authorizeDevice(params);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error });
  });

  it('400 invalid_request for a repeated parameter or a JSON body', async () => {
    const repeated = await app.inject({
      method: 'POST',
      url: '/device_authorization',
      headers: FORM,
      payload: 'client_id=cli&scope=openid&scope=profile',
    });
    expect(repeated.statusCode).toBe(400);
    expect(repeated.json()).toMatchObject({ error: 'invalid_request' });
    const json = await app.inject({
      method: 'POST',
      url: '/device_authorization',
      payload: { client_id: 'cli', scope: 'openid' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('is published in discovery with the device grant type', async () => {
    const discovery = (await app.inject({ url: '/.well-known/openid-configuration' })).json();
    expect(discovery.device_authorization_endpoint).toBe(`${TEST_ISSUER}/device_authorization`);
    expect(discovery.grant_types_supported).toContain(DEVICE_GRANT);
  });

  it('takes expires_in and interval from DEVICE_CODE_TTL and DEVICE_CODE_POLL_INTERVAL', async () => {
    const tuned = await startTestApp({
      seed: deviceSeed(),
      env: { DEVICE_CODE_TTL: '30', DEVICE_CODE_POLL_INTERVAL: '2' },
    });
    try {
      const response = await tuned.app.inject({
        method: 'POST',
        url: '/device_authorization',
        headers: FORM,
        payload: form({ client_id: 'cli', scope: 'openid' }),
      });
      expect(response.json()).toMatchObject({ expires_in: 30, interval: 2 });
    } finally {
      await tuned.close();
    }
  });
});

describe('verification page (RFC 8628 §3.3)', () => {
  it('shows a form with a user_code input and a CSRF field, and sets the browser cookie', async () => {
    const browser = newBrowser();
    const page = await browser.get('/device');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toContain("form-action 'self'");
    expect(page.body).toMatch(/<form method="post"/);
    expect(page.body).toContain('name="user_code"');
    expect(Object.keys(hiddenFields(page.body))).toEqual(['csrf']);
    expect([...browser.cookies.keys()]).toContain('__Host-op_browser');
  });

  it('pre-fills the code from verification_uri_complete, normalised for display', async () => {
    const device = await startCliDevice();
    const page = await newBrowser().get(device.verification_uri_complete);
    expect(page.body).toContain(`value="${device.user_code}"`);
    const typedLower = await newBrowser().get(
      `/device?user_code=${device.user_code.toLowerCase().replace('-', '')}`,
    );
    expect(typedLower.body).toContain(`value="${device.user_code}"`);
    // Pre-filling decides nothing: the code is still pending.
    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'authorization_pending' });
  });

  it.each([
    ['malformed', 'HELLO'],
    ['unknown', 'BCDF-GHJK'],
  ])('a %s code gets a clear message and the form again', async (_case, typed) => {
    const response = await enterCode(newBrowser(), typed);
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain(
      'That code is not valid. Check the code shown on your device and try again.',
    );
    expect(response.body).toContain('name="user_code"');
  });

  it('an expired code says so', async () => {
    const device = await startCliDevice();
    clock.advance(600);
    const response = await enterCode(newBrowser(), device.user_code);
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('That code has expired. Start again on your device');
  });

  it('a code already approved says it was used', async () => {
    const device = await startCliDevice();
    const first = newBrowser();
    await decide(first, await reachConsent(first, await enterCode(first, device.user_code)), 'approve');
    const again = await enterCode(newBrowser(), device.user_code);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('That code has already been used.');
  });

  it('403 without the CSRF field or from another browser', async () => {
    const device = await startCliDevice();
    const browser = newBrowser();
    await browser.get('/device');
    const missing = await browser.post('/device', { user_code: device.user_code });
    expect(missing.statusCode).toBe(403);
    const otherPage = await newBrowser().get('/device');
    const foreign = await browser.post('/device', {
      ...hiddenFields(otherPage.body),
      user_code: device.user_code,
    });
    expect(foreign.statusCode).toBe(403);
  });

  it('limits code entries to 10 per minute per client IP: the 11th gets 429 with Retry-After', async () => {
    const attacker = newBrowser();
    const page = await attacker.get('/device');
    for (let attempt = 1; attempt <= 10; attempt++) {
      const response = await attacker.post('/device', { ...hiddenFields(page.body), user_code: 'BCDF-GHJK' });
      expect(response.statusCode).toBe(400);
    }
    const limited = await attacker.post('/device', { ...hiddenFields(page.body), user_code: 'BCDF-GHJK' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['content-type']).toContain('text/html');
    expect(limited.body).toContain('Too many attempts');

    // Even a correct code is refused from that address now; another address is not affected.
    const device = await startCliDevice();
    const blocked = await attacker.post('/device', {
      ...hiddenFields(page.body),
      user_code: device.user_code,
    });
    expect(blocked.statusCode).toBe(429);
    expect((await enterCode(newBrowser(), device.user_code)).statusCode).toBe(303);
  });

  it('does not rate limit showing the form', async () => {
    const browser = newBrowser();
    for (let i = 0; i < 12; i++) expect((await browser.get('/device')).statusCode).toBe(200);
  });
});

describe('device approval: login, consent, decision', () => {
  it('code → login → consent naming the client and scopes → approve → the device gets tokens', async () => {
    const device = await startCliDevice();
    const browser = newBrowser();
    const afterCode = await enterCode(browser, device.user_code.toLowerCase().replace('-', ''));
    expect(afterCode.statusCode).toBe(303);
    expect(afterCode.headers.location).toMatch(/^\/interaction\/[A-Za-z0-9_-]+\/login$/);

    const login = await browser.follow(afterCode);
    expect(login.body).toContain('name="password"');
    expect(login.body).toContain('Orders &lt;CLI&gt;');
    const consent = await browser.follow(await signIn(browser, login));
    expect(consent.statusCode).toBe(200);
    expect(consent.body).toContain('<strong>Orders &lt;CLI&gt;</strong> would like to:');
    for (const scope of CLI_SCOPE.split(' ')) expect(consent.body).toContain(`<code>${scope}</code>`);
    expect(consent.body).toContain('See your email address');
    expect(consent.body).toContain('View your orders');
    expect(consent.body).toContain(DEVICE_CONSENT_NOTICE);
    expect(consent.body).toMatch(/name="decision" value="approve"/);
    expect(consent.body).toMatch(/name="decision" value="deny"/);

    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'authorization_pending' });
    const done = await decide(browser, consent, 'approve');
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Device connected');

    const tokens = await poll(device.device_code);
    expect(tokens.statusCode).toBe(200);
    expect(tokens.headers['cache-control']).toBe('no-store');
    const body = tokens.json();
    // Every granted scope, offline_access included with the refresh token (RFC 6749 §5.1).
    expect(body).toMatchObject({ token_type: 'Bearer', scope: CLI_SCOPE });
    expect(body.refresh_token).toEqual(expect.any(String));
    const idToken = decodeJwt(body.id_token);
    expect(idToken).toMatchObject({ iss: TEST_ISSUER, sub: ALICE.sub, aud: 'cli' });
    expect(idToken.sid).toEqual(expect.any(String));
    expect(decodeJwt(body.access_token)).toMatchObject({
      sub: ALICE.sub,
      client_id: 'cli',
      gid: expect.any(String),
    });

    // RFC 8628: single use. A second redemption is invalid_grant and revokes the grant.
    const again = await poll(device.device_code);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ error: 'invalid_grant' });
    const refresh = await app.inject({
      method: 'POST',
      url: '/token',
      headers: FORM,
      payload: form({ grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: 'cli' }),
    });
    expect(refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('the refresh token from the device grant rotates', async () => {
    const device = await startCliDevice();
    const browser = newBrowser();
    await decide(browser, await reachConsent(browser, await enterCode(browser, device.user_code)), 'approve');
    const tokens = (await poll(device.device_code)).json();
    const refreshed = await app.inject({
      method: 'POST',
      url: '/token',
      headers: FORM,
      payload: form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'cli' }),
    });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().refresh_token).not.toBe(tokens.refresh_token);
  });

  it('deny → a page saying so, and the device gets access_denied', async () => {
    const device = await startCliDevice();
    const browser = newBrowser();
    const denied = await decide(
      browser,
      await reachConsent(browser, await enterCode(browser, device.user_code)),
      'deny',
    );
    expect(denied.statusCode).toBe(200);
    expect(denied.body).toContain('Access denied');
    const response = await poll(device.device_code);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'access_denied' });
  });

  it('with an SSO session the code goes straight to consent (no login page)', async () => {
    const browser = newBrowser();
    const first = await startCliDevice();
    await decide(browser, await reachConsent(browser, await enterCode(browser, first.user_code)), 'approve');

    const second = await startCliDevice();
    const afterCode = await enterCode(browser, second.user_code);
    expect(afterCode.headers.location).toMatch(/\/consent$/);
    const consent = await browser.follow(afterCode);
    expect(consent.body).toContain('name="decision"');
    await decide(browser, consent, 'approve');
    expect((await poll(second.device_code)).statusCode).toBe(200);
  });

  it('consent is asked even for a skip_consent client, and its scopes are named', async () => {
    const response = await authorizeDevice(
      { scope: 'openid profile' },
      { authorization: basicAuthorization('tv', TV_SECRET) },
    );
    const device = response.json();
    const browser = newBrowser();
    const consent = await reachConsent(browser, await enterCode(browser, device.user_code));
    expect(consent.body).toContain('<strong>Living-room TV</strong> would like to:');
    expect(consent.body).toContain('<code>profile</code>');
    await decide(browser, consent, 'approve');
    expect((await poll(device.device_code, 'tv')).statusCode).toBe(200);
  });

  it("the user's scope restriction applies: Bob grants only what he may", async () => {
    const device = await startCliDevice();
    const browser = newBrowser();
    const consent = await reachConsent(browser, await enterCode(browser, device.user_code), BOB);
    expect(consent.body).toContain('<code>profile</code>');
    expect(consent.body).not.toContain('<code>orders.read</code>');
    await decide(browser, consent, 'approve');
    expect((await poll(device.device_code)).json()).toMatchObject({ scope: 'openid profile' });
  });

  it('a code decided in another tab while the consent page was open cannot be approved again', async () => {
    const device = await startCliDevice();
    const tabA = newBrowser();
    const tabB = newBrowser();
    const consentA = await reachConsent(tabA, await enterCode(tabA, device.user_code));
    const consentB = await reachConsent(tabB, await enterCode(tabB, device.user_code));
    expect((await decide(tabA, consentA, 'deny')).statusCode).toBe(200);
    const late = await decide(tabB, consentB, 'approve');
    expect(late.statusCode).toBe(400);
    expect(late.body).toContain('That code has already been used.');
    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'access_denied' });
  });

  it('a code that expires while the user signs in ends on a page saying so', async () => {
    const device = await startCliDevice();
    // Entered late in the code's life: the code expires (at +600 s) long before the interaction (10 min).
    clock.advance(400);
    const browser = newBrowser();
    const login = await browser.follow(await enterCode(browser, device.user_code));
    clock.advance(200);
    const afterLogin = await signIn(browser, login);
    const page = await browser.follow(afterLogin);
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('That code has expired.');
    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'expired_token' });
  });
});

describe('device token polling over HTTP (RFC 8628 §3.4–3.5)', () => {
  it('authorization_pending, then slow_down when polled too fast, then expired_token', async () => {
    const device = await startCliDevice();
    const first = await poll(device.device_code);
    expect(first.statusCode).toBe(400);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.json()).toMatchObject({ error: 'authorization_pending' });
    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'slow_down' });
    clock.advance(10);
    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'authorization_pending' });
    clock.advance(600);
    expect((await poll(device.device_code)).json()).toMatchObject({ error: 'expired_token' });
  });

  it('a device code presented by another client is invalid_grant', async () => {
    const device = await startCliDevice();
    const response = await poll(device.device_code, 'tv');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
