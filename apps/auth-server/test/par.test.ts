import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { pkcePair } from './helpers/flows.js';
import {
  ORDERS_API,
  REPORTS_API,
  SPA_REDIRECT_URI,
  TEST_SECRETS,
  testSeed,
  WEB_REDIRECT_URI,
} from './helpers/seed.js';

/** RFC 9126 pushed authorization requests: the PAR endpoint, /authorize with request_uri, per-client requirement. */

const PAR_ONLY = {
  id: 'par-only',
  secret: 'par-only-secret-0123456789abcdef',
  redirect: 'https://par.example.test/cb',
};

function parSeed(): SeedDocument {
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: PAR_ONLY.id,
      client_secret: PAR_ONLY.secret,
      redirect_uris: [PAR_ONLY.redirect],
      grant_types: ['authorization_code'],
      scope: 'openid orders.read',
      skip_consent: true,
      require_pushed_authorization_requests: true,
    },
  ];
  return seed;
}

const clock = createTestClock(Math.floor(Date.now() / 1000));
let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: parSeed(), clock }));
});
afterAll(() => close());

const web = basicAuthorization('web', TEST_SECRETS.web);

function push(params: Record<string, string | string[]>, authorization?: string) {
  return app.inject({
    method: 'POST',
    url: '/par',
    headers: { ...FORM, ...(authorization ? { authorization } : {}) },
    payload: form(params),
  });
}

function webRequest(challenge: string, over: Record<string, string | string[]> = {}) {
  return {
    response_type: 'code',
    redirect_uri: WEB_REDIRECT_URI,
    scope: 'openid orders.read reports.read',
    state: 'pushed-state',
    nonce: 'pushed-nonce',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...over,
  };
}

/** /authorize → login page → code, in a fresh browser. */
async function authorizeWithLogin(path: string) {
  const browser = new TestBrowser(app);
  let response = await browser.follow(await browser.get(path));
  if (response.statusCode === 200 && response.body.includes('name="password"')) {
    response = await browser.post(browser.lastUrl, {
      ...hiddenFields(response.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    });
  }
  return response;
}

describe('POST /par', () => {
  it('answers 201 with a one-minute request_uri, not cacheable', async () => {
    const response = await push(webRequest(pkcePair().challenge), web);
    expect(response.statusCode).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json();
    expect(body.expires_in).toBe(60);
    expect(body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
  });

  it('authenticates the client as the token endpoint does', async () => {
    const wrong = await push(webRequest(pkcePair().challenge), basicAuthorization('web', 'wrong'));
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('invalid_client');
    // A public client identifies itself by client_id (and must use PKCE).
    const spa = await push({
      ...webRequest(pkcePair().challenge),
      client_id: 'spa',
      redirect_uri: SPA_REDIRECT_URI,
      scope: 'openid',
    });
    expect(spa.statusCode).toBe(201);
  });

  it.each([
    ['a scope the client lacks', { scope: 'openid admin' }, 'invalid_scope'],
    ['an unknown resource', { resource: 'https://unknown.example.test' }, 'invalid_target'],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example.test/cb' }, 'invalid_request'],
    ['a request_uri', { request_uri: 'urn:ietf:params:oauth:request_uri:abc' }, 'invalid_request'],
    ['a client_id of another client', { client_id: 'spa' }, 'invalid_request'],
  ])('refuses %s with a JSON error, never a redirect', async (_name, over, code) => {
    const response = await push(webRequest(pkcePair().challenge, over), web);
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.json().error).toBe(code);
  });
});

describe('/authorize with a request_uri', () => {
  it('runs the pushed request (parameters, resources, state) and ignores what the browser adds', async () => {
    const { verifier, challenge } = pkcePair();
    const pushed = (await push(webRequest(challenge, { resource: [REPORTS_API, ORDERS_API] }), web)).json();
    const callback = await authorizeWithLogin(
      `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.request_uri, scope: 'openid', state: 'forged' })}`,
    );
    const location = locationOf(callback);
    expect(`${location.origin}${location.pathname}`).toBe(WEB_REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('pushed-state');

    // The code carries the pushed resources: a token per resource (RFC 8707).
    const token = (resource: string) =>
      app.inject({
        method: 'POST',
        url: '/token',
        headers: { ...FORM, authorization: web },
        payload: form({
          grant_type: 'authorization_code',
          code: location.searchParams.get('code')!,
          redirect_uri: WEB_REDIRECT_URI,
          code_verifier: verifier,
          resource,
        }),
      });
    const issued = (await token(ORDERS_API)).json();
    expect(decodeJwt(issued.access_token).aud).toBe(ORDERS_API);
    expect(decodeJwt(issued.access_token).scope).toBe('openid orders.read');
    // The response lists the whole grant (RFC 6749 §5.1), both pushed resources' scopes.
    expect(issued.scope).toBe('openid orders.read reports.read');
    expect(decodeJwt(issued.id_token).nonce).toBe('pushed-nonce');
  });

  /** The login page of a fresh visit to `path`, and the browser that holds it. */
  async function openLoginPage(browser: TestBrowser, path: string) {
    const page = await browser.follow(await browser.get(path));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="password"');
    return page;
  }

  const signIn = (browser: TestBrowser, page: { body: string }, url: string) =>
    browser.post(url, {
      ...hiddenFields(page.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    });

  it('shows the login page on every visit before sign-in, and is used up by the code (RFC 9126 §7.3)', async () => {
    const pushed = (await push(webRequest(pkcePair().challenge), web)).json();
    const path = `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.request_uri })}`;
    const browser = new TestBrowser(app);
    await openLoginPage(browser, path);
    // A reload (or a second tab) before signing in: the login page again, not an error.
    const again = await openLoginPage(browser, path);
    const callback = locationOf(await signIn(browser, again, browser.lastUrl));
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    expect(callback.searchParams.get('state')).toBe('pushed-state');

    for (const visitor of [browser, new TestBrowser(app)]) {
      const used = await visitor.get(path);
      expect(used.statusCode).toBe(400);
      expect(used.headers.location).toBeUndefined();
      expect(used.body).toContain('invalid_request_uri');
    }
  });

  it('is used up by a code issued straight from the SSO session, too', async () => {
    const browser = new TestBrowser(app);
    const first = (await push(webRequest(pkcePair().challenge), web)).json();
    const firstPath = `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: first.request_uri })}`;
    await signIn(browser, await openLoginPage(browser, firstPath), browser.lastUrl);
    const pushed = (await push(webRequest(pkcePair().challenge), web)).json();
    const path = `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.request_uri })}`;
    expect(locationOf(await browser.get(path)).searchParams.get('code')).toEqual(expect.any(String));
    const used = await browser.get(path);
    expect([used.statusCode, used.body.includes('invalid_request_uri')]).toEqual([400, true]);
  });

  it('gives one code for two sign-ins of the same request on two instances sharing the database', async () => {
    const { app: other, close: closeOther } = await startTestApp({
      seed: parSeed(),
      clock,
      database: { handle: app.database, drop: async () => {} } as never,
    });
    try {
      const pushed = (await push(webRequest(pkcePair().challenge), web)).json();
      const path = `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.request_uri })}`;
      const browsers = [new TestBrowser(app), new TestBrowser(other)];
      const pages = await Promise.all(browsers.map((browser) => openLoginPage(browser, path)));
      const finished = await Promise.all(
        browsers.map((browser, index) => signIn(browser, pages[index]!, browser.lastUrl)),
      );
      const codes = finished.filter((response) => response.headers.location?.includes('code='));
      expect(codes).toHaveLength(1);
      const refused = finished.find((response) => !response.headers.location?.includes('code='));
      expect(refused?.statusCode).toBe(400);
      expect(refused?.headers.location).toBeUndefined();
      expect(refused?.body).toContain('invalid_request_uri');
    } finally {
      await closeOther();
    }
  });

  it('expires after 60 seconds', async () => {
    const pushed = (await push(webRequest(pkcePair().challenge), web)).json();
    clock.advance(60);
    const response = await new TestBrowser(app).get(
      `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.request_uri })}`,
    );
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('invalid_request_uri');
  });

  it('refuses another client_id without spending the request_uri', async () => {
    const pushed = (await push(webRequest(pkcePair().challenge), web)).json();
    const other = await new TestBrowser(app).get(
      `/authorize?${new URLSearchParams({ client_id: 'spa', request_uri: pushed.request_uri })}`,
    );
    expect(other.statusCode).toBe(400);
    const own = await new TestBrowser(app).get(
      `/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.request_uri })}`,
    );
    expect(own.statusCode).toBe(303);
  });
});

describe('require_pushed_authorization_requests', () => {
  const request = (challenge: string) => ({
    client_id: PAR_ONLY.id,
    response_type: 'code',
    redirect_uri: PAR_ONLY.redirect,
    scope: 'openid orders.read',
    state: 's-par',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });

  it('sends a plain authorization request back with invalid_request and state', async () => {
    const response = await new TestBrowser(app).get(
      `/authorize?${new URLSearchParams(request(pkcePair().challenge))}`,
    );
    const location = locationOf(response);
    expect(`${location.origin}${location.pathname}`).toBe(PAR_ONLY.redirect);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('state')).toBe('s-par');
  });

  it('accepts the same request pushed first', async () => {
    const pushed = (
      await push(request(pkcePair().challenge), basicAuthorization(PAR_ONLY.id, PAR_ONLY.secret))
    ).json();
    const callback = await authorizeWithLogin(
      `/authorize?${new URLSearchParams({ client_id: PAR_ONLY.id, request_uri: pushed.request_uri })}`,
    );
    expect(locationOf(callback).searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe('openid-client as the client', () => {
  it('builds the authorization URL through PAR and completes the flow', async () => {
    const localBase = await app.listen({ port: 0, host: '127.0.0.1' });
    const customFetch: client.CustomFetch = (url, options) => {
      const target = new URL(url.toString());
      return fetch(new URL(`${target.pathname}${target.search}`, localBase), options as RequestInit);
    };
    const config = await client.discovery(
      new URL(TEST_ISSUER),
      'web',
      undefined,
      client.ClientSecretBasic(TEST_SECRETS.web),
      {
        [client.customFetch]: customFetch,
      },
    );
    const verifier = client.randomPKCECodeVerifier();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: WEB_REDIRECT_URI,
      scope: 'openid orders.read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const callback = await authorizeWithLogin(`${url.pathname}${url.search}`);
    const tokens = await client.authorizationCodeGrant(config, locationOf(callback), {
      pkceCodeVerifier: verifier,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.sub).toBe('u-alice');
  });
});

describe('discovery', () => {
  it('advertises the PAR endpoint, not required of every client', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(metadata.pushed_authorization_request_endpoint).toBe(`${TEST_ISSUER}/par`);
    expect(metadata.require_pushed_authorization_requests).toBe(false);
  });
});
