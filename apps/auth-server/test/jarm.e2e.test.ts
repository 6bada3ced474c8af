import type { LightMyRequestResponse } from 'fastify';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { type ClientKey, clientKey } from './helpers/client-keys.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * openid-client v6 with `useJwtResponseMode` as the JARM counterpart, against a listening server:
 * it verifies each `response` JWT (signature against the JWKS, `iss`, `aud`, `exp`, `state`)
 * before redeeming the code. Query (`jwt`), `form_post.jwt`, an error, and a FAPI 2.0 Message
 * Signing client (PAR, signed request object, DPoP, private_key_jwt) required to use JARM.
 */

const REDIRECT_URI = 'https://jarm.example.test/callback';
const BANK_REDIRECT_URI = 'https://bank.example.test/callback';
const SECRET = 'jarm-secret-for-tests-0123456789abcdef';

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;
let bankKey: ClientKey;

const toLocal = (url: string | URL) => {
  const target = new URL(url.toString());
  if (target.origin !== TEST_ISSUER) throw new Error(`unexpected request to ${target.origin}`);
  return new URL(`${target.pathname}${target.search}`, localBase);
};
const rewritingFetch: client.CustomFetch = (url, options) => fetch(toLocal(url), options as RequestInit);

beforeAll(async () => {
  bankKey = await clientKey('ES256');
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: 'jarm-web',
      client_secret: SECRET,
      redirect_uris: [REDIRECT_URI],
      scope: 'openid',
      skip_consent: true,
    },
    {
      client_id: 'bank-ms',
      profile: 'fapi2',
      require_signed_request_object: true,
      jwks: { keys: [bankKey.publicJwk] },
      redirect_uris: [BANK_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'openid offline_access',
      skip_consent: true,
    },
  ];
  ({ app, close } = await startTestApp({ seed }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => close());

async function webClient() {
  const config = await client.discovery(new URL(TEST_ISSUER), 'jarm-web', SECRET, undefined, {
    [client.customFetch]: rewritingFetch,
  });
  client.useJwtResponseMode(config);
  return config;
}

/** The person's browser: /authorize, the login page, then whatever the server answers. */
async function signIn(authorizationUrl: URL): Promise<LightMyRequestResponse> {
  const browser = new TestBrowser(app);
  const loginPage = await browser.follow(await browser.get(authorizationUrl.toString()));
  return browser.follow(
    await browser.post(browser.lastUrl, {
      ...hiddenFields(loginPage.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    }),
  );
}

describe('openid-client with JARM (useJwtResponseMode)', () => {
  it('response_mode=jwt: verifies the signed response in the query and redeems its code', async () => {
    const config = await webClient();
    expect(config.serverMetadata().response_modes_supported).toContain('jwt');
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    expect(url.searchParams.get('response_mode')).toBe('jwt');
    const callback = locationOf(await signIn(url));
    expect([...callback.searchParams.keys()]).toEqual(['response']);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.claims()?.aud).toBe('jarm-web');
  });

  it('response_mode=form_post.jwt: verifies the response POSTed by the form', async () => {
    const config = await webClient();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    url.searchParams.set('response_mode', 'form_post.jwt');
    const page = await signIn(url);
    expect(formAction(page.body)).toBe(REDIRECT_URI);
    // What the browser posts to the client's redirect URI.
    const posted = new Request(REDIRECT_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(hiddenFields(page.body)).toString(),
    });
    const tokens = await client.authorizationCodeGrant(config, posted, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it('reads a signed error response as the error it carries', async () => {
    const config = await webClient();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state,
      prompt: 'none',
    });
    const callback = locationOf(await new TestBrowser(app).get(url.toString()));
    await expect(
      client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: 'x'.repeat(43),
        expectedState: state,
      }),
    ).rejects.toMatchObject({ error: 'login_required' });
  });

  it('a FAPI 2.0 Message Signing client: PAR + signed request object + DPoP, the response as ES256 JARM', async () => {
    const config = await client.discovery(
      new URL(TEST_ISSUER),
      'bank-ms',
      { authorization_signed_response_alg: 'ES256' },
      client.PrivateKeyJwt({ key: bankKey.privateKey, kid: bankKey.kid }),
      { [client.customFetch]: rewritingFetch },
    );
    client.useJwtResponseMode(config);
    const dpopKeys = await client.randomDPoPKeyPair('ES256');
    const dpop = client.getDPoPHandle(config, dpopKeys);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const { searchParams } = await client.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: BANK_REDIRECT_URI,
        scope: 'openid offline_access',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        dpop_jkt: await calculateJwkThumbprint(await exportJWK(dpopKeys.publicKey)),
      },
      { key: bankKey.privateKey, kid: bankKey.kid },
    );
    const url = await client.buildAuthorizationUrlWithPAR(config, searchParams, { DPoP: dpop });
    const callback = locationOf(await signIn(url));
    expect(`${callback.origin}${callback.pathname}`).toBe(BANK_REDIRECT_URI);
    expect([...callback.searchParams.keys()]).toEqual(['response']);
    const tokens = await client.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce },
      undefined,
      { DPoP: dpop },
    );
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
  });
});
