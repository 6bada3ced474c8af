import { ACR_VALUES } from '@oidc-orders/oauth-core';
import * as client from 'openid-client';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { TEST_SECRETS, testSeed, WEB_REDIRECT_URI } from './helpers/seed.js';

/**
 * End to end against a listening server (port 0), with openid-client v6 as the relying party:
 * discovery, authorization code + PKCE through the real /authorize and login page, ID token
 * validation, UserInfo, refresh, revocation, introspection, client credentials.
 *
 * ISSUER stays https://issuer.example.test (as behind a TLS-terminating gateway); a rewriting fetch
 * sends every request to the ephemeral local port. That also shows that the server builds its URLs
 * from ISSUER, not from the Host it is reached at.
 */

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;

const toLocal = (url: string | URL) => {
  const target = new URL(url.toString());
  if (target.origin !== TEST_ISSUER) throw new Error(`unexpected request to ${target.origin}`);
  return new URL(`${target.pathname}${target.search}`, localBase);
};
const rewritingFetch: client.CustomFetch = (url, options) => fetch(toLocal(url), options as RequestInit);

/** A cookie-keeping browser over fetch, enough for the login form. */
class Browser {
  private readonly cookies = new Map<string, string>();

  async request(url: string | URL, form?: Record<string, string>): Promise<Response> {
    const response = await fetch(toLocal(url), {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const separator = pair.indexOf('=');
      this.cookies.set(pair.slice(0, separator), pair.slice(separator + 1));
    }
    return response;
  }
}

/** Every hidden input of a page, sent back as is (the contract's CSRF rule). */
function hiddenInputs(page: string): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const tag of page.match(/<input[^>]*type="hidden"[^>]*>/g) ?? []) {
    const name = /name="([^"]*)"/.exec(tag)?.[1];
    const value = /value="([^"]*)"/.exec(tag)?.[1] ?? '';
    if (name)
      inputs[name] = value
        .replace(/&amp;/g, '&')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>');
  }
  return inputs;
}

function absolute(location: string | null, base: string): URL {
  if (!location) throw new Error('redirect without Location');
  return new URL(location, base);
}

beforeAll(async () => {
  ({ app, close } = await startTestApp());
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => close());

async function discover(clientId: string, authentication: client.ClientAuth) {
  return client.discovery(new URL(TEST_ISSUER), clientId, undefined, authentication, {
    [client.customFetch]: rewritingFetch,
  });
}

describe('openid-client against a listening server', () => {
  it('runs discovery, the code flow with PKCE, UserInfo, refresh, introspection and revocation', async () => {
    const config = await discover('web', client.ClientSecretBasic(TEST_SECRETS.web));
    expect(config.serverMetadata().issuer).toBe(TEST_ISSUER);

    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB_REDIRECT_URI,
      scope: 'openid profile email offline_access orders.read',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });

    // The person's browser: /authorize → login page → (skip_consent) → back to the client.
    const browser = new Browser();
    const toLogin = await browser.request(authorizationUrl);
    expect([302, 303]).toContain(toLogin.status);
    const loginUrl = absolute(toLogin.headers.get('location'), TEST_ISSUER);
    const loginPage = await (await browser.request(loginUrl)).text();
    expect(loginPage).toMatch(/<form[^>]*method="post"/i);
    const afterLogin = await browser.request(loginUrl, {
      ...hiddenInputs(loginPage),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    });
    expect([302, 303]).toContain(afterLogin.status);
    const callbackUrl = absolute(afterLogin.headers.get('location'), TEST_ISSUER);
    expect(`${callbackUrl.origin}${callbackUrl.pathname}`).toBe(WEB_REDIRECT_URI);

    // openid-client checks iss (RFC 9207), state, PKCE, the ID token's signature, iss, aud, exp, nonce.
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims).toMatchObject({ iss: TEST_ISSUER, aud: 'web', sub: 'u-alice', nonce });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toEqual(expect.any(String));

    const userInfo = await client.fetchUserInfo(config, tokens.access_token, 'u-alice');
    expect(userInfo).toMatchObject({ sub: 'u-alice', email: 'alice@example.test', name: 'Alice Example' });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.claims()?.sub).toBe('u-alice');

    const active = await client.tokenIntrospection(config, refreshed.access_token);
    expect(active).toMatchObject({ active: true, client_id: 'web', sub: 'u-alice' });

    // Revoking the refresh token ends the grant: no more refreshes, the access token goes inactive.
    await client.tokenRevocation(config, refreshed.refresh_token!, { token_type_hint: 'refresh_token' });
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await client.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false });
  });

  it('checks amr and acr of a sign-in with password and authenticator app (acr_values at the multi-factor level)', async () => {
    // Test-only secret: a user with an authenticator app, added to the running server's seed.
    const totpSecret = 'KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU';
    const seed = testSeed();
    await app.reseed({
      ...seed,
      users: [
        ...(seed.users ?? []),
        { sub: 'u-erin', username: 'erin', password: 'erin-password-for-tests', totp_secret: totpSecret },
      ],
    });
    const config = await discover('web', client.ClientSecretBasic(TEST_SECRETS.web));
    expect(config.serverMetadata().acr_values_supported).toContain(ACR_VALUES.mfa);
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB_REDIRECT_URI,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      acr_values: ACR_VALUES.mfa,
    });
    const browser = new Browser();
    const loginUrl = absolute((await browser.request(authorizationUrl)).headers.get('location'), TEST_ISSUER);
    const loginPage = await (await browser.request(loginUrl)).text();
    const afterLogin = await browser.request(loginUrl, {
      ...hiddenInputs(loginPage),
      username: 'erin',
      password: 'erin-password-for-tests',
    });
    const otpUrl = absolute(afterLogin.headers.get('location'), TEST_ISSUER);
    expect(otpUrl.pathname).toMatch(/\/otp$/);
    const otpPage = await (await browser.request(otpUrl)).text();
    const otp = TOTP.generate({ secret: Secret.fromBase32(totpSecret), timestamp: Date.now() });
    const afterOtp = await browser.request(otpUrl, { ...hiddenInputs(otpPage), otp });
    const callbackUrl = absolute(afterOtp.headers.get('location'), TEST_ISSUER);

    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims).toMatchObject({ sub: 'u-erin', acr: ACR_VALUES.mfa, auth_time: expect.any(Number) });
    expect(claims?.amr).toEqual(expect.arrayContaining(['pwd', 'otp', 'mfa']));
  });

  it('runs the client credentials grant with client_secret_post', async () => {
    const config = await discover('service', client.ClientSecretPost(TEST_SECRETS.service));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'orders.read' });
    expect(tokens).toMatchObject({ scope: 'orders.read' });
    expect(tokens.access_token.split('.')).toHaveLength(3);
  });

  it('reports a wrong client secret as invalid_client', async () => {
    const config = await discover('service', client.ClientSecretBasic('wrong'));
    const failure = await client
      .clientCredentialsGrant(config, { scope: 'orders.read' })
      .catch((error) => error);
    // RFC 6749 §5.2: 401 with a WWW-Authenticate challenge, which openid-client surfaces as such.
    expect(failure).toMatchObject({ code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE', status: 401 });
    expect(await (failure.response as Response).json()).toMatchObject({ error: 'invalid_client' });
  });
});
