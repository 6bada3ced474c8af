import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientsAdmin } from '../src/admin/clients-admin.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { issueCode, pkcePair } from './helpers/flows.js';
import { TEST_SECRETS, testSeed, WEB_REDIRECT_URI } from './helpers/seed.js';

/**
 * OpenID Connect Core §5.3.2 signed UserInfo responses: a client whose registration names
 * `userinfo_signed_response_alg` (OIDC Dynamic Client Registration §2) gets a JWT signed with the
 * server's key of that algorithm, verified here with jose against /jwks; other clients keep JSON.
 */

const SIGNED_CLIENTS = { RS256: 'userinfo-rs256', ES256: 'userinfo-es256' } as const;

function seedWithSignedUserInfoClients(): SeedDocument {
  const seed = testSeed();
  const signedClients = Object.entries(SIGNED_CLIENTS).map(([alg, clientId]) => ({
    client_id: clientId,
    client_secret: TEST_SECRETS.web,
    redirect_uris: [WEB_REDIRECT_URI],
    scope: 'openid profile email',
    skip_consent: true,
    userinfo_signed_response_alg: alg as keyof typeof SIGNED_CLIENTS,
  }));
  return {
    ...seed,
    clients: [...(seed.clients ?? []), ...signedClients],
    client_registration: { open: true, scope: 'openid profile email' },
  };
}

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: seedWithSignedUserInfoClients() }));
});
afterAll(() => close());

async function accessTokenOf(clientId: string, clientSecret = TEST_SECRETS.web): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const scope = 'openid profile email';
  const code = await issueCode(app, { clientId, redirectUri: WEB_REDIRECT_URI, scope, challenge });
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization(clientId, clientSecret) },
    payload: form({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
    }),
  });
  expect(response.statusCode).toBe(200);
  return String(response.json().access_token);
}

async function userInfo(accessToken: string) {
  return app.inject({ method: 'GET', url: '/userinfo', headers: { authorization: `Bearer ${accessToken}` } });
}

async function serverKeys() {
  const response = await app.inject({ method: 'GET', url: '/jwks' });
  return createLocalJWKSet(response.json() as JSONWebKeySet);
}

describe('signed UserInfo responses (OpenID Connect Core §5.3.2)', () => {
  it('discovery lists RS256 and ES256 in userinfo_signing_alg_values_supported, each tested below', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });

    expect(response.json().userinfo_signing_alg_values_supported).toEqual(Object.keys(SIGNED_CLIENTS));
  });

  it.each(Object.entries(SIGNED_CLIENTS))(
    'answers a client registered with %s by an application/jwt signed with the server key of that alg',
    async (alg, clientId) => {
      const response = await userInfo(await accessTokenOf(clientId));

      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/jwt');
      expect(response.headers['cache-control']).toBe('no-store');
      const { payload, protectedHeader } = await jwtVerify(response.body, await serverKeys(), {
        issuer: TEST_ISSUER,
        audience: clientId,
        algorithms: [alg],
      });
      expect(protectedHeader).toEqual({ alg, kid: expect.any(String), typ: 'JWT' });
      expect(payload).toEqual({
        iss: TEST_ISSUER,
        aud: clientId,
        sub: 'u-alice',
        name: 'Alice Example',
        email: 'alice@example.test',
        email_verified: true,
      });
    },
  );

  it('signs with the key /jwks publishes under the header kid', async () => {
    const response = await userInfo(await accessTokenOf(SIGNED_CLIENTS.ES256));
    const jwks = (await app.inject({ method: 'GET', url: '/jwks' })).json() as JSONWebKeySet;

    const { kid } = decodeProtectedHeader(response.body);
    expect(jwks.keys.filter((key) => key.kid === kid).map((key) => key.alg)).toEqual(['ES256']);
  });

  it('keeps the plain JSON answer for a client that registered no userinfo_signed_response_alg', async () => {
    const response = await userInfo(await accessTokenOf('web'));

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({
      sub: 'u-alice',
      name: 'Alice Example',
      email: 'alice@example.test',
      email_verified: true,
    });
  });

  it('stores userinfo_signed_response_alg of an RFC 7591 registration: that client gets signed UserInfo', async () => {
    const registration = await app.inject({
      method: 'POST',
      url: '/register',
      payload: { redirect_uris: [WEB_REDIRECT_URI], userinfo_signed_response_alg: 'ES256' },
    });
    expect(registration.statusCode).toBe(201);
    const { client_id: clientId, client_secret: clientSecret } = registration.json();
    expect(registration.json().userinfo_signed_response_alg).toBe('ES256');

    const response = await userInfo(await accessTokenOf(clientId, clientSecret));

    expect(response.headers['content-type']).toBe('application/jwt');
    const { payload } = await jwtVerify(response.body, await serverKeys(), { algorithms: ['ES256'] });
    expect(payload).toMatchObject({ iss: TEST_ISSUER, aud: clientId, sub: 'u-alice' });
    // `clients export` prints a seed entry that keeps the member, so adopting the client keeps it.
    const entry = await createClientsAdmin(app.database.db).exportSeedEntry(clientId);
    expect(entry.userinfo_signed_response_alg).toBe('ES256');
  });

  it.each(['none', 'HS256'])('refuses a registration asking userinfo_signed_response_alg %s', async (alg) => {
    const registration = await app.inject({
      method: 'POST',
      url: '/register',
      payload: { redirect_uris: [WEB_REDIRECT_URI], userinfo_signed_response_alg: alg },
    });

    expect(registration.statusCode).toBe(400);
    expect(registration.json().error).toBe('invalid_client_metadata');
  });

  it('answers errors as before: an unknown token gets 401 with a Bearer challenge, no JWT', async () => {
    const response = await userInfo('not-a-token');

    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
  });
});
