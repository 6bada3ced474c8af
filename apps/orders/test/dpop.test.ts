import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
} from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, withApiKey } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import {
  accessTokenClaims,
  FAKE_CLIENT_ID,
  FAKE_CLIENT_SECRET,
  FAKE_RESOURCE_ID,
  FAKE_RESOURCE_SECRET,
  type FakeIssuer,
  startFakeIssuer,
} from './helpers/fake-issuer.js';

/**
 * RFC 9449 §7 at this resource server: `GET /orders` and `GET /orders/:id` with DPoP-bound access
 * tokens (JWT `cnf.jkt`, or introspection's `cnf`). openid-client's DPoP support is the honest
 * caller; hand-made proofs break one rule each.
 */

const BASE_URL = 'https://orders.example';
let database: TestDatabase;
let issuer: FakeIssuer;
let app: FastifyInstance;

function environment(fake: FakeIssuer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OIDC_ISSUER: fake.issuer,
    OIDC_CLIENT_ID: FAKE_CLIENT_ID,
    OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
    SESSION_SECRET: 'dpop-test-session-secret-0123456789abcdef',
    RESOURCE_ID: FAKE_RESOURCE_ID,
    RESOURCE_SECRET: FAKE_RESOURCE_SECRET,
    BASE_URL,
    ...extra,
  };
}

interface ProofKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function newProofKey(alg: 'ES256' | 'RS256' = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey: privateKey as CryptoKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A proof that passes every rule unless `overrides` breaks one. */
async function proof(
  key: ProofKey,
  token: string,
  overrides: { header?: Record<string, unknown>; claims?: JWTPayload; url?: string } = {},
): Promise<string> {
  const claims: JWTPayload = {
    jti: randomBytes(12).toString('base64url'),
    htm: 'GET',
    htu: overrides.url ?? `${BASE_URL}/orders`,
    iat: now(),
    ath: ath(token),
    ...overrides.claims,
  };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, ...overrides.header } as never)
    .sign(key.privateKey);
}

async function boundToken(key: ProofKey, overrides: JWTPayload = {}): Promise<string> {
  return issuer.sign(accessTokenClaims(issuer.issuer, { cnf: { jkt: key.jkt }, ...overrides }), {
    typ: 'at+jwt',
  });
}

function listOrders(headers: Record<string, string>, target: FastifyInstance = app, url = '/orders') {
  return target.inject({ method: 'GET', url, headers });
}

const challengeOf = (response: { headers: Record<string, unknown> }) =>
  String(response.headers['www-authenticate'] ?? '');

beforeAll(async () => {
  database = await createTestDatabase();
  issuer = await startFakeIssuer();
  app = await buildTestApp(database, { environment: environment(issuer) });
});
afterAll(async () => {
  await app?.close();
  await issuer?.close();
  await database?.dispose();
});
beforeEach(async () => {
  await database.reset();
});

/** openid-client's requests, answered by `target` through inject (no socket). */
function injectingFetch(target: FastifyInstance): typeof fetch {
  return (async (input: string | URL, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const response = await target.inject({
      method: (init.method ?? 'GET') as 'GET',
      url: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(new Headers(init.headers).entries()),
    });
    return new Response(response.statusCode === 204 ? null : response.body, {
      status: response.statusCode,
      headers: Object.entries(response.headers).map(([name, value]) => [name, String(value)]),
    });
  }) as typeof fetch;
}

async function openidClientConfig(target: FastifyInstance): Promise<client.Configuration> {
  const config = new client.Configuration({ issuer: issuer.issuer }, FAKE_CLIENT_ID);
  config[client.customFetch] = injectingFetch(target) as never;
  return config;
}

describe('the honest caller: openid-client with DPoP', () => {
  it('reads the own orders with a JWT bound to its key, on both routes', async () => {
    const placed = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: withApiKey,
      payload: { email: 'alice@example.com', quantity: 2 },
    });
    const id = placed.json().id;
    const keyPair = await client.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    const token = await issuer.sign(accessTokenClaims(issuer.issuer, { cnf: { jkt } }), { typ: 'at+jwt' });
    const config = await openidClientConfig(app);
    const DPoP = client.getDPoPHandle(config, keyPair);

    const list = await client.fetchProtectedResource(
      config,
      token,
      new URL(`${BASE_URL}/orders`),
      'GET',
      undefined,
      undefined,
      { DPoP },
    );
    const one = await client.fetchProtectedResource(
      config,
      token,
      new URL(`${BASE_URL}/orders/${id}`),
      'GET',
      undefined,
      undefined,
      { DPoP },
    );

    expect(list.status).toBe(200);
    expect(((await list.json()) as { id: number }[]).map((order: { id: number }) => order.id)).toEqual([id]);
    expect(one.status).toBe(200);
    expect(((await one.json()) as { id: number }).id).toBe(id);
  });

  it('reads with an opaque token whose introspection carries cnf.jkt (token_type DPoP)', async () => {
    const keyPair = await client.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    issuer.setIntrospection('opaque-dpop', {
      active: true,
      aud: FAKE_RESOURCE_ID,
      iss: issuer.issuer,
      email: 'alice@example.com',
      scope: 'orders.read',
      token_type: 'DPoP',
      cnf: { jkt },
      exp: now() + 60,
    });
    const config = await openidClientConfig(app);

    const response = await client.fetchProtectedResource(
      config,
      'opaque-dpop',
      new URL(`${BASE_URL}/orders`),
      'GET',
      undefined,
      undefined,
      {
        DPoP: client.getDPoPHandle(config, keyPair),
      },
    );

    expect(response.status).toBe(200);
  });
});

describe('every rule of RFC 9449 §4.3 and §7.1, broken one at a time', () => {
  it('a correct hand-made proof passes (the baseline every case below departs from)', async () => {
    const key = await newProofKey();
    const token = await boundToken(key);

    const response = await listOrders({ authorization: `DPoP ${token}`, dpop: await proof(key, token) });

    expect(response.statusCode).toBe(200);
  });

  it.each<[string, (key: ProofKey, token: string) => Promise<string>]>([
    ['typ is not dpop+jwt', (key, token) => proof(key, token, { header: { typ: 'JWT' } })],
    [
      'a symmetric alg (HS256)',
      (key, token) =>
        new SignJWT({ jti: 'hs', htm: 'GET', htu: `${BASE_URL}/orders`, iat: now(), ath: ath(token) })
          .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk } as never)
          .sign(randomBytes(32)),
    ],
    ['htm is another method', (key, token) => proof(key, token, { claims: { htm: 'POST' } })],
    ['htu is another URL', (key, token) => proof(key, token, { url: `${BASE_URL}/users` })],
    ['htu is another host', (key, token) => proof(key, token, { url: 'https://evil.example/orders' })],
    ['iat is stale', (key, token) => proof(key, token, { claims: { iat: now() - 600 } })],
    ['iat is in the future', (key, token) => proof(key, token, { claims: { iat: now() + 600 } })],
    ['ath hashes another token', (key, token) => proof(key, token, { claims: { ath: ath(`${token}x`) } })],
    ['ath is missing', (key, token) => proof(key, token, { claims: { ath: undefined } })],
    [
      'the jwk carries a private key',
      async (key, token) => {
        const { privateKey } = await generateKeyPair('ES256', { extractable: true });
        return proof(key, token, { header: { jwk: await exportJWK(privateKey) } });
      },
    ],
    [
      'the signature is not by the jwk',
      async (key, token) => {
        const other = await newProofKey();
        return proof({ ...other, jwk: key.jwk }, token);
      },
    ],
  ])('%s: 401 invalid_dpop_proof with a DPoP challenge', async (_rule, makeProof) => {
    const key = await newProofKey();
    const token = await boundToken(key);

    const response = await listOrders({ authorization: `DPoP ${token}`, dpop: await makeProof(key, token) });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(/^DPoP realm="orders-api", error="invalid_dpop_proof"/);
    expect(challengeOf(response)).toMatch(/, Bearer realm="orders-api"$/);
    expect(response.json()).toEqual({ statusCode: 401, message: expect.any(String) });
  });

  it('a missing proof: 401 invalid_dpop_proof', async () => {
    const key = await newProofKey();
    const token = await boundToken(key);

    const response = await listOrders({ authorization: `DPoP ${token}` });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('error="invalid_dpop_proof"');
  });

  it('a proof by a key the token is not bound to: 401 invalid_token', async () => {
    const bound = await newProofKey();
    const other = await newProofKey();
    const token = await boundToken(bound);

    const response = await listOrders({ authorization: `DPoP ${token}`, dpop: await proof(other, token) });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(/^DPoP realm="orders-api", error="invalid_token"/);
  });

  it('a replayed proof (same jti) is refused at the same instance', async () => {
    const key = await newProofKey();
    const token = await boundToken(key);
    const headers = { authorization: `DPoP ${token}`, dpop: await proof(key, token) };

    const first = await listOrders(headers);
    const again = await listOrders(headers);

    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(401);
    expect(challengeOf(again)).toContain('error="invalid_dpop_proof"');
  });

  it('a replayed proof is refused at another instance on the same database, even at the same moment', async () => {
    const other = await buildTestApp(database, { environment: environment(issuer) });
    try {
      const key = await newProofKey();
      const token = await boundToken(key);
      const headers = { authorization: `DPoP ${token}`, dpop: await proof(key, token) };
      expect((await listOrders(headers, app)).statusCode).toBe(200);
      expect((await listOrders(headers, other)).statusCode).toBe(401);

      const racing = { authorization: `DPoP ${token}`, dpop: await proof(key, token) };
      const statuses = (await Promise.all([listOrders(racing, app), listOrders(racing, other)])).map(
        (response) => response.statusCode,
      );
      expect(statuses.sort()).toEqual([200, 401]);
    } finally {
      await other.close();
    }
  });

  it('a rejected proof does not burn its jti: the same token with a fresh proof still works', async () => {
    const key = await newProofKey();
    const token = await boundToken(key);
    const wrongUrl = await proof(key, token, { url: `${BASE_URL}/elsewhere` });
    expect((await listOrders({ authorization: `DPoP ${token}`, dpop: wrongUrl })).statusCode).toBe(401);

    expect(
      (await listOrders({ authorization: `DPoP ${token}`, dpop: await proof(key, token) })).statusCode,
    ).toBe(200);
  });
});

describe('scheme and binding must agree (RFC 9449 §7.1–§7.2)', () => {
  it('a DPoP-bound JWT sent as Bearer: 401, DPoP error="invalid_token" and Bearer offered too', async () => {
    const key = await newProofKey();
    const token = await boundToken(key);

    const response = await listOrders({ authorization: `Bearer ${token}`, dpop: await proof(key, token) });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(
      /^DPoP realm="orders-api", error="invalid_token", .*algs="[^"]*ES256[^"]*"/,
    );
    expect(challengeOf(response)).toMatch(/, Bearer realm="orders-api"$/);
  });

  it('a DPoP-bound opaque token (introspection cnf) sent as Bearer: 401 invalid_token', async () => {
    const key = await newProofKey();
    issuer.setIntrospection('opaque-bound', {
      active: true,
      aud: FAKE_RESOURCE_ID,
      email: 'alice@example.com',
      scope: 'orders.read',
      token_type: 'DPoP',
      cnf: { jkt: key.jkt },
    });

    const response = await listOrders({ authorization: 'Bearer opaque-bound' });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(/^DPoP realm="orders-api", error="invalid_token"/);
  });

  it('a DPoP-bound token sent as Bearer to GET /orders/:id: 401 as well', async () => {
    const key = await newProofKey();
    const token = await boundToken(key);

    const response = await listOrders({ authorization: `Bearer ${token}` }, app, '/orders/1');

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('DPoP realm="orders-api", error="invalid_token"');
  });

  it('an unbound token sent with the DPoP scheme and a valid proof: 401 invalid_token', async () => {
    const key = await newProofKey();
    const token = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' });

    const response = await listOrders({ authorization: `DPoP ${token}`, dpop: await proof(key, token) });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(/^DPoP realm="orders-api", error="invalid_token"/);
  });

  it('a token confirmed by something other than jkt (mTLS x5t#S256) is refused, not taken as bearer', async () => {
    const token = await issuer.sign(accessTokenClaims(issuer.issuer, { cnf: { 'x5t#S256': 'abc' } }), {
      typ: 'at+jwt',
    });

    const response = await listOrders({ authorization: `Bearer ${token}` });

    expect(response.statusCode).toBe(401);
  });

  it('without credentials, the challenge offers Bearer and DPoP with its algs', async () => {
    const response = await listOrders({});

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toBe(
      'Bearer realm="orders-api", DPoP realm="orders-api", algs="ES256 EdDSA Ed25519 RS256 PS256"',
    );
  });

  it('a bound token without orders.read: 403 insufficient_scope on the DPoP challenge', async () => {
    const key = await newProofKey();
    const token = await boundToken(key, { scope: 'openid' });

    const response = await listOrders({ authorization: `DPoP ${token}`, dpop: await proof(key, token) });

    expect(response.statusCode).toBe(403);
    expect(challengeOf(response)).toMatch(/^DPoP realm="orders-api", error="insufficient_scope"/);
  });
});

describe('htu is the public URL', () => {
  it('behind TRUST_PROXY the forwarded scheme and host count; without it they are ignored', async () => {
    const proxied = await buildTestApp(database, { environment: environment(issuer, { TRUST_PROXY: '1' }) });
    try {
      const key = await newProofKey();
      const token = await boundToken(key);
      const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'gateway.example' };
      const gatewayProof = () => proof(key, token, { url: 'https://gateway.example/orders' });

      const behindProxy = await listOrders(
        { authorization: `DPoP ${token}`, dpop: await gatewayProof(), ...forwarded },
        proxied,
      );
      const direct = await listOrders(
        { authorization: `DPoP ${token}`, dpop: await gatewayProof(), ...forwarded },
        app,
      );

      expect(behindProxy.statusCode).toBe(200);
      expect(direct.statusCode).toBe(401);
    } finally {
      await proxied.close();
    }
  });
});

describe('expired jtis are swept', () => {
  it('the replay table keeps a row until the proof is too old to be accepted anyway', async () => {
    const { dpopReplayStore } = await import('../src/repositories/dpop-replay.js');
    const store = dpopReplayStore(database.handle.db);

    expect(await store.markUsed('k1', now() - 1)).toBe(true);
    expect(await store.markUsed('k2', now() + 60)).toBe(true);
    expect(await store.markUsed('k2', now() + 60)).toBe(false);

    expect(await store.deleteExpired(now())).toBe(1);
    expect(await store.markUsed('k2', now() + 60)).toBe(false);
  });
});
