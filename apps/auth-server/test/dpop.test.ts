import { verifyDpopProof } from '@oidc-orders/oauth-core';
import { createMemoryDpopReplayStore } from '@oidc-orders/oauth-core/testing';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { createDpopKey, type DpopKey, dpopProof } from './helpers/dpop.js';
import { issueCode, pkcePair } from './helpers/flows.js';
import { ORDERS_API, REPORTS_API, SPA_REDIRECT_URI, TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * RFC 9449 at the token endpoint, UserInfo and introspection. openid-client v6 (DPoP handle)
 * is the counterpart over a listening server; hand-built proofs break one thing at a time.
 */

const TOKEN_URL = `${TEST_ISSUER}/token`;
const USERINFO_URL = `${TEST_ISSUER}/userinfo`;

function dpopSeed(): SeedDocument {
  const seed = testSeed();
  const spa = {
    redirect_uris: [SPA_REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'] as Array<'authorization_code' | 'refresh_token'>,
    scope: 'openid profile offline_access orders.read reports.read',
    skip_consent: true,
  };
  seed.clients = [
    ...(seed.clients ?? []),
    { client_id: 'dpop-spa', ...spa },
    { client_id: 'dpop-required', ...spa, dpop_bound_access_tokens: true },
    { client_id: 'dpop-nonce', ...spa, dpop_nonce_required: true },
  ];
  return seed;
}

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;

beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: dpopSeed() }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => close());

/** Every response the relying party saw, so a test can show the nonce challenge it retried. */
const seen: Array<{ url: string; status: number; error?: string; nonce: string | null }> = [];
const recordingFetch: client.CustomFetch = async (url, options) => {
  const target = new URL(url.toString());
  const response = await fetch(
    new URL(`${target.pathname}${target.search}`, localBase),
    options as RequestInit,
  );
  const body = response.status >= 400 ? await response.clone().text() : '';
  seen.push({
    url: target.pathname,
    status: response.status,
    error: body.includes('"error"') ? JSON.parse(body).error : undefined,
    nonce: response.headers.get('dpop-nonce'),
  });
  return response;
};

async function publicClientConfig(clientId: string) {
  return client.discovery(new URL(TEST_ISSUER), clientId, undefined, client.None(), {
    [client.customFetch]: recordingFetch,
  });
}

/** An authorization response as the browser would bring it back (RFC 9207 `iss` included). */
async function callback(clientId: string, scope: string): Promise<{ url: URL; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const code = await issueCode(app, { clientId, redirectUri: SPA_REDIRECT_URI, scope, challenge });
  const url = new URL(SPA_REDIRECT_URI);
  url.searchParams.set('code', code);
  url.searchParams.set('iss', TEST_ISSUER);
  return { url, verifier };
}

function tokenRequest(body: Record<string, string>, proof?: string, authorization?: string) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, ...(proof ? { dpop: proof } : {}), ...(authorization ? { authorization } : {}) },
    payload: form(body),
  });
}

async function codeRequestBody(clientId: string, scope = 'openid orders.read offline_access') {
  const { verifier, challenge } = pkcePair();
  const code = await issueCode(app, { clientId, redirectUri: SPA_REDIRECT_URI, scope, challenge });
  return {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    redirect_uri: SPA_REDIRECT_URI,
    code_verifier: verifier,
  };
}

describe('DPoP with openid-client as the client', () => {
  it('binds tokens to the key: token_type DPoP, cnf.jkt, refresh and UserInfo with proofs', async () => {
    const config = await publicClientConfig('dpop-spa');
    const keyPair = await client.randomDPoPKeyPair('ES256');
    const dpop = client.getDPoPHandle(config, keyPair);
    const { url, verifier } = await callback('dpop-spa', 'openid profile offline_access orders.read');

    const tokens = await client.authorizationCodeGrant(
      config,
      url,
      { pkceCodeVerifier: verifier, idTokenExpected: true },
      undefined,
      { DPoP: dpop },
    );
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });

    const userInfo = await client.fetchUserInfo(config, tokens.access_token, 'u-alice', { DPoP: dpop });
    expect(userInfo).toMatchObject({ sub: 'u-alice', name: 'Alice Example' });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP: dpop,
    });
    expect(refreshed.token_type.toLowerCase()).toBe('dpop');
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt });

    // RFC 9449 §5: the public client's refresh token is bound to the key; another key fails.
    const otherKey = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    await expect(
      client.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: otherKey }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('retries after a use_dpop_nonce challenge for a client that requires nonces', async () => {
    const config = await publicClientConfig('dpop-nonce');
    const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('EdDSA'));
    const { url, verifier } = await callback('dpop-nonce', 'openid orders.read');
    seen.length = 0;

    const tokens = await client.authorizationCodeGrant(
      config,
      url,
      { pkceCodeVerifier: verifier },
      undefined,
      {
        DPoP: dpop,
      },
    );
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    const tokenCalls = seen.filter((call) => call.url === '/token');
    expect(tokenCalls.map((call) => [call.status, call.error])).toEqual([
      [400, 'use_dpop_nonce'],
      [200, undefined],
    ]);
    expect(tokenCalls[0]?.nonce).toEqual(expect.any(String));
    // A fresh nonce comes with the successful response too (RFC 9449 §8.2).
    expect(tokenCalls[1]?.nonce).toEqual(expect.any(String));

    // UserInfo demands the nonce as well; the handle already holds it, so one request suffices.
    const userInfo = await client.fetchUserInfo(config, tokens.access_token, 'u-alice', { DPoP: dpop });
    expect(userInfo.sub).toBe('u-alice');
  });
});

describe('DPoP at the token endpoint', () => {
  let key: DpopKey;
  beforeAll(async () => {
    key = await createDpopKey();
  });

  it('refuses a replayed proof', async () => {
    const proof = await dpopProof(key, { htu: TOKEN_URL });
    const first = await tokenRequest(await codeRequestBody('dpop-spa'), proof);
    expect(first.statusCode).toBe(200);
    expect(first.json().token_type).toBe('DPoP');
    const replayed = await tokenRequest(await codeRequestBody('dpop-spa'), proof);
    expect(replayed.statusCode).toBe(400);
    expect(replayed.json().error).toBe('invalid_dpop_proof');
  });

  it('refuses a replay at another instance sharing the database', async () => {
    const { app: other, close: closeOther } = await startTestApp({
      seed: dpopSeed(),
      database: { handle: app.database, drop: async () => {} } as never,
    });
    try {
      const proof = await dpopProof(key, { htu: TOKEN_URL });
      expect((await tokenRequest(await codeRequestBody('dpop-spa'), proof)).statusCode).toBe(200);
      const replayed = await other.inject({
        method: 'POST',
        url: '/token',
        headers: { ...FORM, dpop: proof },
        payload: form(await codeRequestBody('dpop-spa')),
      });
      expect(replayed.json().error).toBe('invalid_dpop_proof');
    } finally {
      await closeOther();
    }
  });

  it.each([
    ['a wrong htu', { htu: 'https://other.example.test/token' }],
    ['the Host-derived URL instead of the issuer', { htu: 'http://localhost:80/token' }],
    ['a wrong htm', { htu: TOKEN_URL, htm: 'GET' }],
    ['a stale iat', { htu: TOKEN_URL, iat: Math.floor(Date.now() / 1000) - 600 }],
    ['an iat in the future', { htu: TOKEN_URL, iat: Math.floor(Date.now() / 1000) + 600 }],
  ])('refuses a proof with %s, leaving the code usable', async (_name, claims) => {
    const body = await codeRequestBody('dpop-spa');
    const response = await tokenRequest(body, await dpopProof(key, claims));
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_dpop_proof');
    expect(response.headers['cache-control']).toBe('no-store');
    // The proof is checked before the grant: the code was not consumed.
    expect((await tokenRequest(body, await dpopProof(key, { htu: TOKEN_URL }))).statusCode).toBe(200);
  });

  it('refuses two DPoP headers', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: {
        ...FORM,
        dpop: [await dpopProof(key, { htu: TOKEN_URL }), await dpopProof(key, { htu: TOKEN_URL })],
      },
      payload: form(await codeRequestBody('dpop-spa')),
    });
    expect(response.json().error).toBe('invalid_dpop_proof');
  });

  it('issues Bearer tokens without a proof, except to a client registered with dpop_bound_access_tokens', async () => {
    const plain = await tokenRequest(await codeRequestBody('dpop-spa'));
    expect(plain.json().token_type).toBe('Bearer');
    const required = await tokenRequest(await codeRequestBody('dpop-required'));
    expect(required.statusCode).toBe(400);
    expect(required.json().error).toBe('invalid_request');
    const withProof = await tokenRequest(
      await codeRequestBody('dpop-required'),
      await dpopProof(key, { htu: TOKEN_URL }),
    );
    expect(withProof.json().token_type).toBe('DPoP');
  });

  it('refuses to refresh a bound refresh token without a proof, or with another key', async () => {
    const issued = await tokenRequest(
      await codeRequestBody('dpop-spa'),
      await dpopProof(key, { htu: TOKEN_URL }),
    );
    const refreshToken = issued.json().refresh_token as string;
    const refresh = { grant_type: 'refresh_token', client_id: 'dpop-spa', refresh_token: refreshToken };

    const withoutProof = await tokenRequest(refresh);
    expect(withoutProof.json().error).toBe('invalid_grant');
    const otherKey = await createDpopKey('RS256');
    const wrongKey = await tokenRequest(refresh, await dpopProof(otherKey, { htu: TOKEN_URL }));
    expect(wrongKey.json().error).toBe('invalid_grant');
    // Neither attempt used the token up.
    const rightKey = await tokenRequest(refresh, await dpopProof(key, { htu: TOKEN_URL }));
    expect(rightKey.statusCode).toBe(200);
    expect(rightKey.json().token_type).toBe('DPoP');
  });

  it('answers use_dpop_nonce with a DPoP-Nonce header, then accepts a proof with that nonce', async () => {
    const body = await codeRequestBody('dpop-nonce');
    const challenge = await tokenRequest(body, await dpopProof(key, { htu: TOKEN_URL }));
    expect(challenge.statusCode).toBe(400);
    expect(challenge.json().error).toBe('use_dpop_nonce');
    const nonce = challenge.headers['dpop-nonce'] as string;
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const wrongNonce = await tokenRequest(body, await dpopProof(key, { htu: TOKEN_URL, nonce: `${nonce}x` }));
    expect(wrongNonce.json().error).toBe('use_dpop_nonce');
    const accepted = await tokenRequest(body, await dpopProof(key, { htu: TOKEN_URL, nonce }));
    expect(accepted.statusCode).toBe(200);
    expect(accepted.headers['dpop-nonce']).toBe(nonce);
  });

  it('binds client_credentials tokens of a confidential client too', async () => {
    const response = await tokenRequest(
      { grant_type: 'client_credentials', scope: 'orders.read' },
      await dpopProof(key, { htu: TOKEN_URL }),
      basicAuthorization('service', TEST_SECRETS.service),
    );
    expect(response.json().token_type).toBe('DPoP');
    expect(decodeJwt(response.json().access_token).cnf).toEqual({ jkt: key.jkt });
  });
});

describe('DPoP-bound tokens at introspection and UserInfo', () => {
  let key: DpopKey;
  let jwtToken: string;
  let opaqueToken: string;
  beforeAll(async () => {
    key = await createDpopKey('PS256');
    const jwt = await tokenRequest(
      await codeRequestBody('dpop-spa', 'openid profile orders.read'),
      await dpopProof(key, { htu: TOKEN_URL }),
    );
    jwtToken = jwt.json().access_token;
    const opaque = await tokenRequest(
      await codeRequestBody('dpop-spa', 'openid reports.read'),
      await dpopProof(key, { htu: TOKEN_URL }),
    );
    opaqueToken = opaque.json().access_token;
    expect(opaqueToken.split('.')).toHaveLength(1);
  });

  it('reports token_type DPoP and cnf.jkt for JWT and opaque tokens (the thumbprint is stored)', async () => {
    for (const [token, resource, secret] of [
      [jwtToken, ORDERS_API, TEST_SECRETS.ordersApi],
      [opaqueToken, REPORTS_API, TEST_SECRETS.reportsApi],
    ] as const) {
      const response = await app.inject({
        method: 'POST',
        url: '/introspect',
        headers: { ...FORM, authorization: basicAuthorization(resource, secret) },
        payload: form({ token }),
      });
      expect(response.json()).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
    }
  });

  it('lets a resource server check a proof against the token (ath) and the introspected cnf.jkt', async () => {
    // What an API does with `Authorization: DPoP <token>` + `DPoP: <proof>` (RFC 9449 §7.1).
    const apiUrl = 'https://api.example.test/reports/summary';
    const proof = await dpopProof(key, { htm: 'GET', htu: apiUrl, accessToken: opaqueToken });
    const replay = createMemoryDpopReplayStore();
    const now = Math.floor(Date.now() / 1000);
    const verified = await verifyDpopProof(
      proof,
      { method: 'GET', url: apiUrl, accessToken: opaqueToken, now },
      replay,
    );
    const introspection = await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi) },
      payload: form({ token: opaqueToken }),
    });
    expect(introspection.json().cnf.jkt).toBe(verified.jkt);
    // A proof made for another token fails the ath check.
    const forAnother = await dpopProof(key, { htm: 'GET', htu: apiUrl, accessToken: jwtToken });
    await expect(
      verifyDpopProof(forAnother, { method: 'GET', url: apiUrl, accessToken: opaqueToken, now }, replay),
    ).rejects.toMatchObject({ code: 'invalid_dpop_proof' });
  });

  function userInfo(authorization: string, proof?: string) {
    return app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization, ...(proof ? { dpop: proof } : {}) },
    });
  }

  it('answers UserInfo for the DPoP scheme with a proof that hashes the token', async () => {
    const response = await userInfo(
      `DPoP ${jwtToken}`,
      await dpopProof(key, { htm: 'GET', htu: USERINFO_URL, accessToken: jwtToken }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ sub: 'u-alice', name: 'Alice Example' });
  });

  it('refuses a bound token sent as a bearer token', async () => {
    const response = await userInfo(`Bearer ${jwtToken}`);
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toBe('invalid_token');
  });

  it.each([
    ['no proof', async () => undefined],
    ['a proof without ath', async () => dpopProof(key, { htm: 'GET', htu: USERINFO_URL })],
    [
      'a proof whose ath hashes another token',
      async () => dpopProof(key, { htm: 'GET', htu: USERINFO_URL, accessToken: opaqueToken }),
    ],
    [
      'a proof for the token endpoint',
      async () => dpopProof(key, { htm: 'POST', htu: TOKEN_URL, accessToken: jwtToken }),
    ],
  ])('answers %s with 401 and a DPoP invalid_dpop_proof challenge', async (_name, makeProof) => {
    const response = await userInfo(`DPoP ${jwtToken}`, await makeProof());
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toBe('invalid_dpop_proof');
    expect(response.headers['www-authenticate']).toMatch(
      /^DPoP error="invalid_dpop_proof".*algs="ES256 EdDSA Ed25519 RS256 PS256"/,
    );
  });

  it('answers a proof by another key with 401 invalid_token', async () => {
    const other = await createDpopKey();
    const response = await userInfo(
      `DPoP ${jwtToken}`,
      await dpopProof(other, { htm: 'GET', htu: USERINFO_URL, accessToken: jwtToken }),
    );
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token"/);
  });

  it('challenges for a nonce at UserInfo when the token’s client requires nonces', async () => {
    const nonceKey = await createDpopKey();
    const body = await codeRequestBody('dpop-nonce', 'openid profile');
    const first = await tokenRequest(body, await dpopProof(nonceKey, { htu: TOKEN_URL }));
    const nonce = first.headers['dpop-nonce'] as string;
    const tokens = (await tokenRequest(body, await dpopProof(nonceKey, { htu: TOKEN_URL, nonce }))).json();

    const challenge = await userInfo(
      `DPoP ${tokens.access_token}`,
      await dpopProof(nonceKey, { htm: 'GET', htu: USERINFO_URL, accessToken: tokens.access_token }),
    );
    expect(challenge.statusCode).toBe(401);
    expect(challenge.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/);
    expect(challenge.headers['dpop-nonce']).toBe(nonce);
    const answered = await userInfo(
      `DPoP ${tokens.access_token}`,
      await dpopProof(nonceKey, { htm: 'GET', htu: USERINFO_URL, accessToken: tokens.access_token, nonce }),
    );
    expect(answered.statusCode).toBe(200);
  });

  it('challenges a request without a token with both schemes', async () => {
    const response = await app.inject({ method: 'GET', url: '/userinfo' });
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="userinfo", DPoP algs="/);
  });
});

describe('DPoP replay housekeeping', () => {
  it('deletes expired jti entries from the shared table', async () => {
    expect(await app.dpop.replay.markUsed('housekeeping-test', 1_000)).toBe(true);
    expect(await app.dpop.replay.deleteExpired(1_000)).toBeGreaterThanOrEqual(1);
    expect(await app.dpop.replay.markUsed('housekeeping-test', 2_000)).toBe(true);
  });
});

describe('discovery', () => {
  it('advertises the DPoP algorithms', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(metadata.dpop_signing_alg_values_supported).toEqual([
      'ES256',
      'EdDSA',
      'Ed25519',
      'RS256',
      'PS256',
    ]);
  });
});
