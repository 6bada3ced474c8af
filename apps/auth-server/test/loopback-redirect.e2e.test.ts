import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { pkcePair } from './helpers/flows.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * RFC 8252 §7.3: a native app (a Git credential helper, a CLI) listens on a free loopback port and
 * sends it in `redirect_uri`; the server accepts any port for a public client's loopback IP
 * redirect URI, matches the rest exactly, and the token request must repeat the same URI.
 * openid-client is the native app; a real listener on 127.0.0.1 receives the response.
 */

const NATIVE_SECRET_CLIENT = {
  id: 'loopback-confidential',
  secret: 'loopback-confidential-secret-0123456789',
};

function loopbackSeed(): SeedDocument {
  const seed = testSeed();
  const native = {
    grant_types: ['authorization_code', 'refresh_token'] as Array<'authorization_code' | 'refresh_token'>,
    scope: 'openid profile',
    skip_consent: true,
  };
  seed.clients = [
    ...(seed.clients ?? []),
    { client_id: 'git-helper', redirect_uris: ['http://127.0.0.1/', 'http://localhost/callback'], ...native },
    {
      client_id: NATIVE_SECRET_CLIENT.id,
      client_secret: NATIVE_SECRET_CLIENT.secret,
      redirect_uris: ['http://127.0.0.1/'],
      ...native,
    },
  ];
  return seed;
}

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;
/** The native app's loopback listener, on a port the operating system picked. */
let listener: Server;
let listenerPort: number;
const received: URL[] = [];

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: loopbackSeed() }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
  listener = createServer((request, response) => {
    received.push(new URL(request.url ?? '/', `http://127.0.0.1:${listenerPort}`));
    response.end('Signed in. You can close this window.');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerPort = (listener.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
  await close();
});

const rewritingFetch: client.CustomFetch = (url, options) => {
  const target = new URL(url.toString());
  return fetch(new URL(`${target.pathname}${target.search}`, localBase), options as RequestInit);
};

/** /authorize → login page → the redirect the browser would follow. */
async function signInAt(path: string) {
  const browser = new TestBrowser(app);
  const page = await browser.follow(await browser.get(path));
  expect(page.body).toContain('name="password"');
  return browser.post(browser.lastUrl, {
    ...hiddenFields(page.body),
    username: 'alice',
    password: TEST_SECRETS.alicePassword,
  });
}

function authorizePath(clientId: string, redirectUri: string, challenge: string) {
  const query = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    state: 'loopback-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return `/authorize?${query}`;
}

describe('loopback redirect URIs of native apps (RFC 8252 §7.3)', () => {
  it('runs the code flow on the port the app listens on, registered without one', async () => {
    const config = await client.discovery(new URL(TEST_ISSUER), 'git-helper', undefined, client.None(), {
      [client.customFetch]: rewritingFetch,
    });
    const redirectUri = `http://127.0.0.1:${listenerPort}/`;
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const callback = await signInAt(`${url.pathname}${url.search}`);
    const location = callback.headers.location as string;
    expect(location.startsWith(`${redirectUri}?`)).toBe(true);

    // The browser delivers the response to the app's listener, which hands it to openid-client.
    expect((await fetch(location)).status).toBe(200);
    const arrived = received.at(-1) as URL;
    expect(arrived.searchParams.get('state')).toBe(state);
    const tokens = await client.authorizationCodeGrant(config, arrived, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      idTokenExpected: true,
    });
    expect(tokens.claims()).toMatchObject({ sub: 'u-alice', aud: 'git-helper' });
  });

  it('requires the token request to repeat the URI of the authorization request, port included', async () => {
    const { verifier, challenge } = pkcePair();
    const used = `http://127.0.0.1:${listenerPort}/`;
    const callback = await signInAt(authorizePath('git-helper', used, challenge));
    const code = new URL(callback.headers.location as string).searchParams.get('code') as string;
    const redeem = (redirectUri: string) =>
      app.inject({
        method: 'POST',
        url: '/token',
        headers: FORM,
        payload: form({
          grant_type: 'authorization_code',
          client_id: 'git-helper',
          code,
          redirect_uri: redirectUri,
          code_verifier: verifier,
        }),
      });
    for (const other of ['http://127.0.0.1/', `http://127.0.0.1:${listenerPort + 1}/`]) {
      const refused = await redeem(other);
      expect([refused.statusCode, refused.json().error]).toEqual([400, 'invalid_grant']);
    }
    expect((await redeem(used)).statusCode).toBe(200);
  });

  it.each([
    ['localhost with a port (RFC 8252 §8.3)', 'git-helper', 'http://localhost:5000/callback'],
    ['another path on the loopback port', 'git-helper', 'http://127.0.0.1:5000/other'],
    ['the IPv6 loopback for an IPv4 registration', 'git-helper', 'http://[::1]:5000/'],
    ['a confidential client on another port', NATIVE_SECRET_CLIENT.id, 'http://127.0.0.1:5000/'],
  ])('refuses %s with the error page, never a redirect', async (_name, clientId, redirectUri) => {
    const response = await new TestBrowser(app).get(
      authorizePath(clientId, redirectUri, pkcePair().challenge),
    );
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
  });

  it('still matches a confidential client’s loopback URI exactly', async () => {
    const { verifier, challenge } = pkcePair();
    const callback = await signInAt(authorizePath(NATIVE_SECRET_CLIENT.id, 'http://127.0.0.1/', challenge));
    const code = new URL(callback.headers.location as string).searchParams.get('code') as string;
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: {
        ...FORM,
        authorization: basicAuthorization(NATIVE_SECRET_CLIENT.id, NATIVE_SECRET_CLIENT.secret),
      },
      payload: form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1/',
        code_verifier: verifier,
      }),
    });
    expect(response.statusCode).toBe(200);
  });
});
