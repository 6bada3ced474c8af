import { calculateJwkThumbprint, decodeProtectedHeader, exportJWK } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { type ClientKey, clientKey } from './helpers/client-keys.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * openid-client v6 as a FAPI 2.0 client against a listening server: PAR with a signed
 * request object (RFC 9101) and `dpop_jkt` plus a DPoP proof (RFC 9449 §10), the login page, the
 * code with `iss` (RFC 9207), the token request with a DPoP proof and a private-key assertion
 * (RFC 7523), refresh, introspection answered as a signed JWT (RFC 9701), and revocation.
 */

export const FAPI_REDIRECT_URI = 'https://bank.example.test/callback';

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;
let key: ClientKey;

const toLocal = (url: string | URL) => {
  const target = new URL(url.toString());
  if (target.origin !== TEST_ISSUER) throw new Error(`unexpected request to ${target.origin}`);
  return new URL(`${target.pathname}${target.search}`, localBase);
};
const rewritingFetch: client.CustomFetch = (url, options) => fetch(toLocal(url), options as RequestInit);

beforeAll(async () => {
  key = await clientKey('ES256');
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: 'bank',
      profile: 'fapi2',
      jwks: { keys: [key.publicJwk] },
      require_signed_request_object: true,
      // Signed requests imply signed responses (JARM, Message Signing); this client reads plain ones.
      require_signed_authorization_response: false,
      redirect_uris: [FAPI_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'openid offline_access orders.read',
      skip_consent: true,
    },
  ];
  ({ app, close } = await startTestApp({ seed }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => close());

describe('openid-client as a FAPI 2.0 client', () => {
  it('completes PAR + JAR + dpop_jkt, login, code, DPoP + private_key_jwt token, refresh, JWT introspection, revocation', async () => {
    const config = await client.discovery(
      new URL(TEST_ISSUER),
      'bank',
      // RFC 9701: ask for introspection responses as signed JWTs (openid-client verifies them).
      { introspection_signed_response_alg: 'ES256' },
      client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }),
      { [client.customFetch]: rewritingFetch },
    );
    const metadata = config.serverMetadata();
    expect(metadata.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(metadata.request_parameter_supported).toBe(true);

    const dpopKeys = await client.randomDPoPKeyPair('ES256');
    const dpop = client.getDPoPHandle(config, dpopKeys);
    const dpopJkt = await calculateJwkThumbprint(await exportJWK(dpopKeys.publicKey));
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const { searchParams } = await client.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: FAPI_REDIRECT_URI,
        response_type: 'code',
        scope: 'openid offline_access orders.read',
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        dpop_jkt: dpopJkt,
      },
      { key: key.privateKey, kid: key.kid },
    );
    const authorizationUrl = await client.buildAuthorizationUrlWithPAR(config, searchParams, { DPoP: dpop });
    expect(authorizationUrl.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);

    // The person's browser: /authorize → login page → (skip_consent) → back to the client.
    const browser = new TestBrowser(app);
    const loginPage = await browser.follow(await browser.get(authorizationUrl.toString()));
    const afterLogin = await browser.follow(
      await browser.post(browser.lastUrl, {
        ...hiddenFields(loginPage.body),
        username: 'alice',
        password: TEST_SECRETS.alicePassword,
      }),
    );
    const callbackUrl = locationOf(afterLogin);
    expect(`${callbackUrl.origin}${callbackUrl.pathname}`).toBe(FAPI_REDIRECT_URI);
    expect(callbackUrl.searchParams.get('iss')).toBe(TEST_ISSUER);

    const tokens = await client.authorizationCodeGrant(
      config,
      callbackUrl,
      { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce },
      undefined,
      { DPoP: dpop },
    );
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    expect(decodeProtectedHeader(tokens.id_token as string).alg).toBe('ES256');
    expect(tokens.refresh_token).toBeDefined();

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string, undefined, {
      DPoP: dpop,
    });
    expect(refreshed.token_type.toLowerCase()).toBe('dpop');

    const introspection = await client.tokenIntrospection(config, refreshed.access_token);
    expect(introspection).toMatchObject({ active: true, client_id: 'bank', token_type: 'DPoP' });
    expect(introspection.cnf).toEqual({ jkt: dpopJkt });

    await client.tokenRevocation(config, refreshed.refresh_token as string);
    await expect(
      client.refreshTokenGrant(config, refreshed.refresh_token as string, undefined, { DPoP: dpop }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
