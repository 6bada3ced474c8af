import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BACKCHANNEL_LOGOUT_EVENT, computeS256Challenge } from '@oidc-orders/oauth-core';
import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { confirmLogout, hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, TEST_ISSUER, type TestApp, testConfig } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * Logout: RP-initiated (end_session_endpoint), front-channel iframes on the signed-out page,
 * back-channel logout tokens delivered to a real HTTP listener (verified with jose), retries, and
 * the revocation of the session's grants.
 */

/** A relying party's back-channel endpoint: records every POST and answers as told per path. */
class RelyingPartyListener {
  readonly received: Array<{ path: string; logoutToken: string | null; contentType: string | undefined }> =
    [];
  /** Paths answering 503 this many more times before 200. */
  readonly failuresLeft = new Map<string, number>();
  /** Requests to these paths wait until `release()`. */
  readonly held = new Set<string>();
  private releaseHeld: Array<() => void> = [];
  private arrivals: Array<{ path: string; resolve: () => void }> = [];
  private server: Server | undefined;
  base = '';

  async start() {
    this.server = createServer((request, response) => void this.handle(request, response));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '';
    this.received.push({
      path,
      logoutToken: new URLSearchParams(Buffer.concat(chunks).toString()).get('logout_token'),
      contentType: request.headers['content-type'],
    });
    for (const arrival of this.arrivals.filter((waiting) => waiting.path === path)) arrival.resolve();
    this.arrivals = this.arrivals.filter((waiting) => waiting.path !== path);
    if (this.held.has(path)) await new Promise<void>((resolve) => this.releaseHeld.push(resolve));
    if (path === '/bcl-down') return response.writeHead(500).end();
    const failures = this.failuresLeft.get(path) ?? 0;
    if (failures > 0) {
      this.failuresLeft.set(path, failures - 1);
      return response.writeHead(503).end();
    }
    response.writeHead(200, { 'cache-control': 'no-store' }).end();
  }

  /** Resolves when a request to `path` has arrived (at once if one already has). */
  arrived(path: string): Promise<void> {
    if (this.received.some((entry) => entry.path === path)) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push({ path, resolve }));
  }

  release() {
    this.held.clear();
    for (const resolve of this.releaseHeld.splice(0)) resolve();
  }

  tokensFor(path: string): string[] {
    return this.received.filter((entry) => entry.path === path).map((entry) => entry.logoutToken ?? '');
  }

  async stop() {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const rp = (name: string) => `https://${name}.example.test`;

function logoutSeed(listener: string): SeedDocument {
  const seed = testSeed();
  const client = (name: string, extra: Record<string, unknown>) => ({
    client_id: name,
    client_secret: `${name}-secret-0123456789abcdef`,
    redirect_uris: [`${rp(name)}/callback`],
    post_logout_redirect_uris: [`${rp(name)}/signed-out`],
    grant_types: ['authorization_code', 'refresh_token'] as Array<'authorization_code' | 'refresh_token'>,
    scope: 'openid profile offline_access',
    skip_consent: true,
    ...extra,
  });
  seed.clients = [
    ...(seed.clients ?? []),
    client('rp-a', {
      frontchannel_logout_uri: `${rp('rp-a')}/frontchannel-logout`,
      backchannel_logout_uri: `${listener}/bcl-flaky`,
    }),
    client('rp-b', {
      frontchannel_logout_uri: `${rp('rp-b')}/logout?tenant=7`,
      backchannel_logout_uri: `${listener}/bcl-ok`,
      keep_offline_access_on_logout: true,
    }),
    client('rp-c', { backchannel_logout_uri: `${listener}/bcl-held` }),
    client('rp-d', { backchannel_logout_uri: `${listener}/bcl-down` }),
    client('rp-quiet', {}),
  ];
  seed.users = [
    ...(seed.users ?? []),
    { sub: 'u-bob', username: 'bob', password: 'bob-password-123', name: 'Bob Example' },
  ];
  return seed;
}

let listener: RelyingPartyListener;
let database: TestDatabase;
let app: TestApp;
const clock = createTestClock(Math.floor(Date.now() / 1000));

beforeAll(async () => {
  listener = new RelyingPartyListener();
  await listener.start();
  database = await createTestDatabase();
  app = await buildApp(testConfig(), {
    database: database.handle,
    seed: logoutSeed(listener.base),
    logger: false,
    clock,
    // Short pauses between attempts keep the test quick; attempts and timeout stay as configured.
    backchannelLogout: { retryDelayMs: () => 20 },
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await database.drop();
  await listener.stop();
});

interface SignedIn {
  idToken: string;
  refreshToken: string;
}

/** /authorize for `clientId` in this browser (login page when needed), then the code at /token. */
async function signIn(browser: TestBrowser, clientId: string): Promise<SignedIn> {
  const verifier = `verifier-${clientId}-${'x'.repeat(40)}`;
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: `${rp(clientId)}/callback`,
    response_type: 'code',
    scope: 'openid profile offline_access',
    code_challenge: computeS256Challenge(verifier),
    code_challenge_method: 'S256',
    nonce: `n-${clientId}`,
  });
  let response = await browser.follow(await browser.get(`/authorize?${query}`));
  if (response.statusCode === 200) {
    response = await browser.post(browser.lastUrl, {
      ...hiddenFields(response.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    });
  }
  const code = locationOf(response).searchParams.get('code');
  if (code === null) throw new Error(`no code: ${response.statusCode} ${response.headers.location}`);
  const tokens = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization(clientId, `${clientId}-secret-0123456789abcdef`) },
    payload: form({
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${rp(clientId)}/callback`,
      code_verifier: verifier,
    }),
  });
  expect(tokens.statusCode).toBe(200);
  return { idToken: tokens.json().id_token, refreshToken: tokens.json().refresh_token };
}

function refresh(clientId: string, refreshToken: string) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization(clientId, `${clientId}-secret-0123456789abcdef`) },
    payload: form({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
}

async function jwks(): Promise<JSONWebKeySet> {
  return (await app.inject({ method: 'GET', url: '/jwks' })).json();
}

describe('logout of a session with several relying parties', () => {
  const browser = () => new TestBrowser(app);
  let session: TestBrowser;
  const tokens: Record<string, SignedIn> = {};
  let logoutResponse: Awaited<ReturnType<TestBrowser['get']>>;
  let sid: string;

  beforeAll(async () => {
    session = browser();
    for (const clientId of ['rp-a', 'rp-b', 'rp-c', 'rp-d', 'rp-quiet']) {
      tokens[clientId] = await signIn(session, clientId);
    }
    sid = String(decodeJwt(tokens['rp-a']!.idToken).sid);
    // Every client signed in through the same SSO session.
    for (const signedIn of Object.values(tokens)) expect(decodeJwt(signedIn.idToken).sid).toBe(sid);

    listener.failuresLeft.set('/bcl-flaky', 2);
    listener.held.add('/bcl-held');
    logoutResponse = await session.get(
      `/logout?${new URLSearchParams({
        id_token_hint: tokens['rp-a']!.idToken,
        post_logout_redirect_uri: `${rp('rp-a')}/signed-out`,
        state: 'bye-123',
      })}`,
    );
  });

  it('answers the browser while a relying party is still holding its back-channel request', async () => {
    // The page came back although rp-c has not answered (it cannot: its request is held until
    // released below); a logout that waited for deliveries would never have returned.
    expect(logoutResponse.statusCode).toBe(200);
    await listener.arrived('/bcl-held');
    expect(listener.tokensFor('/bcl-held')).toHaveLength(1);
    listener.release();
    await app.sessionLogout.backchannel.idle();
  });

  it('renders the signed-out page with a hidden iframe per front-channel client, carrying iss and sid', () => {
    const frames = [
      ...logoutResponse.body.matchAll(/<iframe class="frontchannel-logout" src="([^"]+)"/g),
    ].map((match) => new URL(match[1]!.replace(/&amp;/g, '&')));
    expect(frames.map((url) => `${url.origin}${url.pathname}`).sort()).toEqual([
      `${rp('rp-a')}/frontchannel-logout`,
      `${rp('rp-b')}/logout`,
    ]);
    for (const url of frames) {
      expect(url.searchParams.get('iss')).toBe(TEST_ISSUER);
      expect(url.searchParams.get('sid')).toBe(sid);
    }
    expect(frames.find((url) => url.origin === rp('rp-b'))?.searchParams.get('tenant')).toBe('7');
  });

  it('lets only those origins be framed, and continues to the post-logout redirect with state', () => {
    const csp = String(logoutResponse.headers['content-security-policy']);
    expect(csp).toContain(`frame-src ${rp('rp-a')} ${rp('rp-b')};`);
    expect(csp).toContain("frame-ancestors 'none'");
    const link = /<a id="continue"[^>]*href="([^"]+)"/.exec(logoutResponse.body)?.[1]?.replace(/&amp;/g, '&');
    expect(link).toBe(`${rp('rp-a')}/signed-out?state=bye-123`);
    expect(logoutResponse.body).toContain('/assets/signed-out.js');
  });

  it('delivers a logout token that jose verifies against the JWKS to each back-channel client', async () => {
    const keySet = createLocalJWKSet(await jwks());
    for (const [path, clientId] of [
      ['/bcl-flaky', 'rp-a'],
      ['/bcl-ok', 'rp-b'],
      ['/bcl-held', 'rp-c'],
      ['/bcl-down', 'rp-d'],
    ] as const) {
      const [token] = listener.tokensFor(path);
      const { payload, protectedHeader } = await jwtVerify(token!, keySet, {
        issuer: TEST_ISSUER,
        audience: clientId,
        typ: 'logout+jwt',
        requiredClaims: ['iat', 'jti', 'events'],
        currentDate: new Date(clock.nowSeconds() * 1000),
      });
      expect(protectedHeader.alg).toBe('RS256');
      expect(payload).toMatchObject({ sub: 'u-alice', sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } });
      expect(payload).not.toHaveProperty('nonce');
    }
    expect(
      listener.received.every((entry) => entry.contentType === 'application/x-www-form-urlencoded'),
    ).toBe(true);
    // One delivery per client (rp-quiet has no back-channel URI), the retries aside.
    expect(new Set(listener.received.map((entry) => entry.path))).toEqual(
      new Set(['/bcl-flaky', '/bcl-ok', '/bcl-held', '/bcl-down']),
    );
  });

  it('retries failed deliveries: two 503s then 200, and gives up after three attempts', () => {
    const flaky = listener.tokensFor('/bcl-flaky');
    expect(flaky).toHaveLength(3);
    // Every attempt re-sends the same token.
    expect(new Set(flaky).size).toBe(1);
    expect(listener.tokensFor('/bcl-ok')).toHaveLength(1);
    expect(listener.tokensFor('/bcl-down')).toHaveLength(3);
  });

  it('revokes the refresh tokens of the session, except for the client that keeps offline access', async () => {
    for (const clientId of ['rp-a', 'rp-c', 'rp-d', 'rp-quiet']) {
      const response = await refresh(clientId, tokens[clientId]!.refreshToken);
      expect(response.json().error).toBe('invalid_grant');
    }
    expect((await refresh('rp-b', tokens['rp-b']!.refreshToken)).statusCode).toBe(200);
  });

  it('ends the SSO session: prompt=none now answers login_required', async () => {
    const response = await session.get(
      `/authorize?${new URLSearchParams({
        client_id: 'rp-a',
        redirect_uri: `${rp('rp-a')}/callback`,
        response_type: 'code',
        scope: 'openid',
        code_challenge: computeS256Challenge('v'.repeat(43)),
        code_challenge_method: 'S256',
        prompt: 'none',
      })}`,
    );
    expect(locationOf(response).searchParams.get('error')).toBe('login_required');
  });
});

describe('RP-initiated logout variants', () => {
  it('without any hint: asks first, then the signed-out page, no frames, no redirect, no delivery', async () => {
    const received = listener.received.length;
    const browser = new TestBrowser(app);
    await signIn(browser, 'rp-quiet');
    const response = await confirmLogout(browser, await browser.get('/logout'));
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('signed out');
    expect(response.body).not.toContain('<iframe');
    expect(response.headers['content-security-policy']).not.toContain('frame-src');
    await app.sessionLogout.backchannel.idle();
    expect(listener.received.length).toBe(received);
  });

  it('redirects at once (302 with state) when no front-channel client took part', async () => {
    const browser = new TestBrowser(app);
    const { idToken } = await signIn(browser, 'rp-quiet');
    const response = await browser.get(
      `/logout?${new URLSearchParams({
        id_token_hint: idToken,
        post_logout_redirect_uri: `${rp('rp-quiet')}/signed-out`,
        state: 's1',
      })}`,
    );
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(`${rp('rp-quiet')}/signed-out?state=s1`);
  });

  it('accepts an expired id_token_hint', async () => {
    const browser = new TestBrowser(app);
    const { idToken } = await signIn(browser, 'rp-quiet');
    clock.advance(2 * 3600);
    try {
      expect(decodeJwt(idToken).exp).toBeLessThan(clock.nowSeconds());
      const response = await browser.get(`/logout?${new URLSearchParams({ id_token_hint: idToken })}`);
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('signed out');
      expect(response.headers.location).toBeUndefined();
    } finally {
      clock.advance(-2 * 3600);
    }
  });

  // RP-Initiated Logout 1.0 §3: no redirection to an unregistered URI; and the user is not signed
  // out silently either: an error page (400) that ends nothing.
  it.each([
    ['GET', 'another client’s post_logout_redirect_uri', `${rp('rp-a')}/signed-out`],
    ['POST', 'another client’s post_logout_redirect_uri', `${rp('rp-a')}/signed-out`],
    ['GET', 'the registered URI with a query added', `${rp('rp-quiet')}/signed-out?foo=bar`],
    ['POST', 'the registered URI with a query added', `${rp('rp-quiet')}/signed-out?foo=bar`],
  ])('%s with a valid hint and %s: an error page, and the session goes on', async (method, _name, uri) => {
    const browser = new TestBrowser(app);
    const { idToken, refreshToken } = await signIn(browser, 'rp-quiet');
    const params = { id_token_hint: idToken, post_logout_redirect_uri: uri, state: 's1' };
    const response =
      method === 'GET'
        ? await browser.get(`/logout?${new URLSearchParams(params)}`)
        : await browser.post('/logout', params);
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('<code>invalid_request</code>');
    expect(response.body).toContain('class="button" href="/"');
    // Nothing ended: the SSO session still signs in without a prompt, the grant still refreshes.
    const silent = await browser.get(
      `/authorize?${new URLSearchParams({
        client_id: 'rp-quiet',
        redirect_uri: `${rp('rp-quiet')}/callback`,
        response_type: 'code',
        scope: 'openid',
        code_challenge: computeS256Challenge('v'.repeat(43)),
        code_challenge_method: 'S256',
        prompt: 'none',
      })}`,
    );
    expect(locationOf(silent).searchParams.get('code')).not.toBeNull();
    expect((await refresh('rp-quiet', refreshToken)).statusCode).toBe(200);
  });

  it('also notifies the previous user’s relying parties when another user signs in on the browser', async () => {
    // Ending a session by replacing it is a logout too: its grants are revoked.
    const browser = new TestBrowser(app);
    const { refreshToken } = await signIn(browser, 'rp-quiet');
    const response = await browser.get(
      `/authorize?${new URLSearchParams({
        client_id: 'rp-quiet',
        redirect_uri: `${rp('rp-quiet')}/callback`,
        response_type: 'code',
        scope: 'openid',
        code_challenge: computeS256Challenge('v'.repeat(43)),
        code_challenge_method: 'S256',
        prompt: 'login',
      })}`,
    );
    const login = await browser.follow(response);
    await browser.post(browser.lastUrl, {
      ...hiddenFields(login.body),
      username: 'bob',
      password: 'bob-password-123',
    });
    expect((await refresh('rp-quiet', refreshToken)).json().error).toBe('invalid_grant');
  });
});

describe('discovery', () => {
  it('advertises front- and back-channel logout with sessions', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(metadata).toMatchObject({
      end_session_endpoint: `${TEST_ISSUER}/logout`,
      frontchannel_logout_supported: true,
      frontchannel_logout_session_supported: true,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
  });
});
