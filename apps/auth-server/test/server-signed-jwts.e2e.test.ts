import type { SigningAlg } from '@oidc-orders/oauth-core';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUPPORTED_SIGNING_ALGS } from '../src/keys/key-ring.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * The server signs its own JWTs with node:crypto (oauth-core `signCompactJws`), not jose. Here the
 * outside verifiers accept them, for every algorithm the server publishes: openid-client with
 * non-repudiation checks on (it then verifies the ID token's signature against the JWKS, which it
 * skips by default for a token endpoint response) and JARM, and jose's `jwtVerify` against /jwks.
 */

const SECRET = 'signed-jwts-secret-for-tests-0123456789';
const redirectUriOf = (alg: SigningAlg) => `https://${alg.toLowerCase()}.example.test/callback`;
const clientIdOf = (alg: SigningAlg) => `signs-${alg.toLowerCase()}`;
const resourceOf = (alg: SigningAlg) => `https://api-${alg.toLowerCase()}.example.test`;
const scopeOf = (alg: SigningAlg) => `${alg.toLowerCase()}.read`;

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;

const toLocal = (url: string | URL) => {
  const target = new URL(url.toString());
  if (target.origin !== TEST_ISSUER) throw new Error(`unexpected request to ${target.origin}`);
  return new URL(`${target.pathname}${target.search}`, localBase);
};
const rewritingFetch: client.CustomFetch = (url, options) => fetch(toLocal(url), options as RequestInit);

beforeAll(async () => {
  const seed = testSeed();
  for (const alg of SUPPORTED_SIGNING_ALGS) {
    seed.clients?.push({
      client_id: clientIdOf(alg),
      client_secret: SECRET,
      redirect_uris: [redirectUriOf(alg)],
      scope: `openid ${scopeOf(alg)}`,
      id_token_signed_response_alg: alg,
      authorization_signed_response_alg: alg,
      skip_consent: true,
    });
    seed.resources?.push({
      id: resourceOf(alg),
      scopes: [scopeOf(alg)],
      access_token_format: 'jwt',
      access_token_signing_alg: alg,
      secret: SECRET,
    });
  }
  ({ app, close } = await startTestApp({ seed }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => close());

async function publishedKeys() {
  return createLocalJWKSet((await (await fetch(new URL('/jwks', localBase))).json()) as JSONWebKeySet);
}

/** openid-client as a relying party that insists on `alg` and checks every signature it is given. */
async function relyingParty(alg: SigningAlg, introspectionAlg: SigningAlg) {
  const metadata = {
    id_token_signed_response_alg: alg,
    authorization_signed_response_alg: alg,
    introspection_signed_response_alg: introspectionAlg,
  };
  const config = await client.discovery(
    new URL(TEST_ISSUER),
    clientIdOf(alg),
    metadata,
    client.ClientSecretBasic(SECRET),
    {
      [client.customFetch]: rewritingFetch,
      execute: [client.enableNonRepudiationChecks, client.useJwtResponseMode],
    },
  );
  return config;
}

/** The person's browser: /authorize, the login page, back to the client with a JARM `response`. */
async function signIn(authorizationUrl: URL): Promise<URL> {
  const browser = new TestBrowser(app);
  const loginPage = await browser.follow(await browser.get(authorizationUrl.toString()));
  const fields = { ...hiddenFields(loginPage.body), username: 'alice', password: TEST_SECRETS.alicePassword };
  return locationOf(await browser.follow(await browser.post(browser.lastUrl, fields)));
}

describe('what discovery publishes', () => {
  it('names only algorithms the key store makes keys for, so the tests below cover each one', async () => {
    const metadata = (await (
      await fetch(new URL('/.well-known/openid-configuration', localBase))
    ).json()) as Record<string, string[]>;
    const published = new Set([
      ...metadata.id_token_signing_alg_values_supported!,
      ...metadata.authorization_signing_alg_values_supported!,
      ...metadata.introspection_signing_alg_values_supported!,
      ...(metadata.userinfo_signing_alg_values_supported ?? []),
    ]);
    expect([...published].every((alg) => (SUPPORTED_SIGNING_ALGS as string[]).includes(alg))).toBe(true);
    expect(metadata.id_token_signing_alg_values_supported).toEqual([...SUPPORTED_SIGNING_ALGS]);
  });
});

describe.each(SUPPORTED_SIGNING_ALGS)('JWTs the server signs with %s', (alg) => {
  it('openid-client verifies the JARM response, ID token and JWT introspection signatures; jose the ID and access tokens', async () => {
    const introspectionAlg = 'ES256';
    const config = await relyingParty(alg, introspectionAlg);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUriOf(alg),
      scope: `openid ${scopeOf(alg)}`,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const callback = await signIn(url);
    expect([...callback.searchParams.keys()]).toEqual(['response']);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()).toMatchObject({ iss: TEST_ISSUER, aud: clientIdOf(alg), sub: 'u-alice', nonce });

    // The JWT introspection response (RFC 9701), verified by openid-client against the JWKS too.
    const introspection = await client.tokenIntrospection(config, tokens.access_token);
    expect(introspection).toMatchObject({ active: true, client_id: clientIdOf(alg) });

    // jose, as a resource server would: the ID token and the JWT access token against /jwks.
    const keys = await publishedKeys();
    const idToken = await jwtVerify(tokens.id_token!, keys, {
      issuer: TEST_ISSUER,
      audience: clientIdOf(alg),
    });
    expect(idToken.protectedHeader).toMatchObject({ alg, typ: 'JWT', kid: expect.any(String) });
    const accessToken = await jwtVerify(tokens.access_token, keys, {
      issuer: TEST_ISSUER,
      audience: resourceOf(alg),
      typ: 'at+jwt',
    });
    expect(accessToken.protectedHeader.alg).toBe(alg);
  });
});
