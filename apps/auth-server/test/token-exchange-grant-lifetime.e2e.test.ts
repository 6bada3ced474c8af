import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsersAdmin } from '../src/admin/users-admin.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, TestBrowser } from './browser.js';
import {
  basicAuthorization,
  FORM,
  form,
  startTestApp,
  TEST_ISSUER,
  TEST_KEY_ENCRYPTION_KEY,
  type TestApp,
} from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { ORDERS_API, REPORTS_API, TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * RFC 8693 with an ID token as `subject_token`, openid-client as the relying party doing the
 * exchange: the exchanged token belongs to the grant the ID token was issued in. Ending that grant
 * (the user removes the app on the account page, signs out of the session, or an administrator
 * runs `users reset-password`) makes the exchanged tokens inactive at introspection, and the same
 * ID token, still unexpired, buys nothing more (`invalid_grant`, as the grant's refresh token gets).
 */

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const PORTAL = {
  id: 'portal',
  secret: 'portal-secret-for-tests-0123456789abcdef',
  redirect: 'https://portal.example.test/callback',
};

function portalSeed(): SeedDocument {
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: PORTAL.id,
      client_secret: PORTAL.secret,
      redirect_uris: [PORTAL.redirect],
      grant_types: ['authorization_code', 'refresh_token', EXCHANGE],
      scope: 'openid profile offline_access orders.read reports.read',
      skip_consent: true,
      token_exchange: {
        audiences: [ORDERS_API, REPORTS_API],
        scopes: ['openid', 'orders.read', 'reports.read'],
        subject_token_types: [ID_TOKEN],
      },
    },
  ];
  return seed;
}

let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;
let config: client.Configuration;

beforeAll(async () => {
  ({ app, database, close } = await startTestApp({ seed: portalSeed() }));
  const localBase = await app.listen({ port: 0, host: '127.0.0.1' });
  const rewritingFetch: client.CustomFetch = (url, options) => {
    const target = new URL(url.toString());
    return fetch(new URL(`${target.pathname}${target.search}`, localBase), options as RequestInit);
  };
  config = await client.discovery(
    new URL(TEST_ISSUER),
    PORTAL.id,
    undefined,
    client.ClientSecretBasic(PORTAL.secret),
    { [client.customFetch]: rewritingFetch },
  );
});
afterAll(() => close());

/** The portal's sign-in through the real pages: the browser (with its SSO session) and the tokens. */
async function signIn() {
  const browser = new TestBrowser(app);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: PORTAL.redirect,
    scope: 'openid profile offline_access orders.read reports.read',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const page = await browser.follow(await browser.get(`${url.pathname}${url.search}`));
  const callback = await browser.post(browser.lastUrl, {
    ...hiddenFields(page.body),
    username: 'alice',
    password: TEST_SECRETS.alicePassword,
  });
  const tokens = await client.authorizationCodeGrant(config, new URL(callback.headers.location as string), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    idTokenExpected: true,
  });
  return { browser, idToken: tokens.id_token as string, refreshToken: tokens.refresh_token as string };
}

const exchangeIdToken = (idToken: string, audience: string) =>
  client.genericGrantRequest(config, EXCHANGE, {
    subject_token: idToken,
    subject_token_type: ID_TOKEN,
    audience,
  });

async function introspect(token: string, resource: { id: string; secret: string }) {
  const response = await app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization: basicAuthorization(resource.id, resource.secret) },
    payload: form({ token }),
  });
  return response.json();
}
const ordersApi = { id: ORDERS_API, secret: TEST_SECRETS.ordersApi };
const reportsApi = { id: REPORTS_API, secret: TEST_SECRETS.reportsApi };

describe('token exchange of an ID token: bound to its grant', () => {
  it('ends the exchanged token when the user removes the app, and refuses the ID token then', async () => {
    const { browser, idToken, refreshToken } = await signIn();
    const exchanged = await exchangeIdToken(idToken, ORDERS_API);
    expect(exchanged.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    expect(await introspect(exchanged.access_token, ordersApi)).toMatchObject({
      active: true,
      sub: 'u-alice',
      client_id: PORTAL.id,
    });

    const account = await browser.get('/account');
    expect(account.body).toContain(`data-app="${PORTAL.id}"`);
    const removed = await browser.post(`/account/apps/${PORTAL.id}/revoke`, hiddenFields(account.body));
    // Post/redirect/get: the result is at the GET address the 303 names.
    expect(removed.statusCode).toBe(303);
    const result = await browser.get(removed.headers.location as string);
    expect(result.body).toContain('Access removed.');
    expect(result.body).not.toContain(`data-app="${PORTAL.id}"`);

    await expect(client.refreshTokenGrant(config, refreshToken)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await introspect(exchanged.access_token, ordersApi)).toEqual({ active: false });
    // The ID token is still unexpired, but its grant has ended.
    await expect(exchangeIdToken(idToken, ORDERS_API)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('ends the exchanged token when the user signs out of the session the ID token came from', async () => {
    const { browser, idToken } = await signIn();
    const exchanged = await exchangeIdToken(idToken, ORDERS_API);
    expect(await introspect(exchanged.access_token, ordersApi)).toMatchObject({ active: true });
    // OIDC RP-Initiated Logout with the session's own ID token: the session and its grants end.
    const loggedOut = await browser.get(`/logout?${new URLSearchParams({ id_token_hint: idToken })}`);
    expect(loggedOut.statusCode).toBe(200);
    expect(await introspect(exchanged.access_token, ordersApi)).toEqual({ active: false });
    await expect(exchangeIdToken(idToken, ORDERS_API)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('ends the exchanged (opaque) token at users reset-password, and refuses the ID token then', async () => {
    const { idToken } = await signIn();
    const exchanged = await exchangeIdToken(idToken, REPORTS_API);
    expect(await introspect(exchanged.access_token, reportsApi)).toMatchObject({ active: true });

    const admin = createUsersAdmin({
      db: database.handle.db,
      keyEncryptionKey: new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url')),
      clock: app.protocol.clock,
      random: app.protocol.random,
      issuer: TEST_ISSUER,
      signOut: app.userSignOut,
    });
    await admin.resetPassword('alice', TEST_SECRETS.alicePassword);

    expect(await introspect(exchanged.access_token, reportsApi)).toEqual({ active: false });
    await expect(exchangeIdToken(idToken, REPORTS_API)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
