import type { FastifyInstance } from 'fastify';
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
 * The resource-server side: `GET /orders` and `GET /orders/:id` with bearer tokens, against a
 * stand-in issuer that can mint the tokens a real one never would (expired, foreign, mistyped).
 * The same checks against the real auth server are in signin.e2e.test.ts.
 */

let database: TestDatabase;
let issuer: FakeIssuer;
let app: FastifyInstance;

function oidcEnvironment(fake: FakeIssuer): Record<string, string> {
  return {
    OIDC_ISSUER: fake.issuer,
    OIDC_CLIENT_ID: FAKE_CLIENT_ID,
    OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
    SESSION_SECRET: 'bearer-test-session-secret-0123456789abcdef',
    RESOURCE_ID: FAKE_RESOURCE_ID,
    RESOURCE_SECRET: FAKE_RESOURCE_SECRET,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  issuer = await startFakeIssuer();
  app = await buildTestApp(database, { environment: oidcEnvironment(issuer) });
});
afterAll(async () => {
  await app?.close();
  await issuer?.close();
  await database?.dispose();
});
beforeEach(async () => {
  await database.reset();
});

async function placeOrder(email: string, quantity: number): Promise<number> {
  const response = await app.inject({
    method: 'POST',
    url: '/orders',
    headers: withApiKey,
    payload: { email, quantity },
  });
  expect(response.statusCode).toBe(201);
  return response.json().id;
}

function listOrders(authorization?: string) {
  return app.inject({
    method: 'GET',
    url: '/orders',
    headers: authorization === undefined ? {} : { authorization },
  });
}

function challengeOf(response: { headers: Record<string, unknown> }): string {
  return String(response.headers['www-authenticate'] ?? '');
}

describe('GET /orders with a JWT access token', () => {
  it("answers the caller's own orders only, found by the token's email claim", async () => {
    const first = await placeOrder('alice@example.com', 2);
    await placeOrder('bob@example.com', 1);
    const second = await placeOrder('Alice@Example.com', 3);
    const token = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' });

    const response = await listOrders(`Bearer ${token}`);

    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.map((order: { id: number }) => order.id)).toEqual([first, second]);
    expect(Object.keys(body[0]).sort()).toEqual(['createdAt', 'id', 'quantity', 'status', 'total']);
    expect(body[0]).toMatchObject({ quantity: 2, total: '19.98', status: 'created' });
  });

  it('accepts RS256 as well as ES256, and the bearer scheme in any case', async () => {
    const token = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt', alg: 'RS256' });

    const response = await listOrders(`bearer ${token}`);

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
  });

  it('without credentials: 401 with a bare Bearer challenge (RFC 6750 §3.1), DPoP offered beside it', async () => {
    const response = await listOrders();

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(new RegExp(`^Bearer realm="${FAKE_RESOURCE_ID}", DPoP `));
    expect(challengeOf(response)).not.toContain('error=');
    expect(response.json()).toEqual({ statusCode: 401, message: expect.any(String) });
  });

  it('another scheme is not a bearer token: 401 with the bare challenge', async () => {
    const response = await listOrders('Basic dXNlcjpwYXNz');

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).not.toContain('error=');
  });

  it.each([
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 5 }, 'at+jwt'],
    ['a token for another audience', { aud: 'billing-api' }, 'at+jwt'],
    ['a token of another issuer', { iss: 'https://evil.example' }, 'at+jwt'],
    ['an ID token (typ JWT, aud = the client)', { aud: FAKE_CLIENT_ID, nonce: 'n' }, 'JWT'],
    ['an ID-token-shaped token addressed to this API (typ JWT)', {}, 'JWT'],
    ['a token without typ', {}, undefined],
    ['a token without exp', { exp: undefined }, 'at+jwt'],
  ])('%s: 401 invalid_token', async (_name, overrides, typ) => {
    const claims = accessTokenClaims(issuer.issuer, overrides);
    const token = await issuer.sign(claims, typ === undefined ? {} : { typ });

    const response = await listOrders(`Bearer ${token}`);

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(
      /^Bearer realm="orders-api", error="invalid_token", error_description="/,
    );
  });

  it('a token signed by a key the issuer never published: 401 invalid_token', async () => {
    await issuer.addUnpublishedKey('stranger');
    const token = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt', kid: 'stranger' });

    const response = await listOrders(`Bearer ${token}`);

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('error="invalid_token"');
  });

  it('alg none and a tampered payload: 401 invalid_token', async () => {
    const good = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' });
    const [header, payload, signature] = good.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`;
    const forged = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    forged.email = 'bob@example.com';
    const tampered = `${header}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`;

    for (const token of [none, tampered]) {
      const response = await listOrders(`Bearer ${token}`);
      expect(response.statusCode).toBe(401);
      expect(challengeOf(response)).toContain('error="invalid_token"');
    }
  });

  it('a valid token without orders.read: 403 insufficient_scope naming the scope', async () => {
    const token = await issuer.sign(
      accessTokenClaims(issuer.issuer, { scope: 'openid profile orders.write' }),
      {
        typ: 'at+jwt',
      },
    );

    const response = await listOrders(`Bearer ${token}`);

    expect(response.statusCode).toBe(403);
    expect(challengeOf(response)).toContain('error="insufficient_scope"');
    expect(challengeOf(response)).toContain('scope="orders.read"');
  });

  it('a valid token without an email claim: 401 invalid_token (no user to look up)', async () => {
    const token = await issuer.sign(accessTokenClaims(issuer.issuer, { email: undefined }), {
      typ: 'at+jwt',
    });

    const response = await listOrders(`Bearer ${token}`);

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('error="invalid_token"');
  });

  it('an unknown kid re-reads the JWKS once: a key published after the first read is found', async () => {
    // A fresh app: its key cache has not used its re-read yet.
    const fresh = await buildTestApp(database, { environment: oidcEnvironment(issuer) });
    try {
      const list = (token: string) =>
        fresh.inject({ method: 'GET', url: '/orders', headers: { authorization: `Bearer ${token}` } });
      expect(
        (await list(await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' }))).statusCode,
      ).toBe(200);
      const readsAfterFirstUse = issuer.jwksReads();
      await issuer.addUnpublishedKey('rotated');
      issuer.publish('rotated');
      const rotated = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt', kid: 'rotated' });

      const first = await list(rotated);
      const again = await list(rotated);
      expect(issuer.jwksReads()).toBe(readsAfterFirstUse + 1);

      // A second unknown kid right after does not cause another read (made-up kids cannot flood the provider).
      await issuer.addUnpublishedKey('made-up');
      const madeUp = await list(
        await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt', kid: 'made-up' }),
      );

      expect(first.statusCode).toBe(200);
      expect(again.statusCode).toBe(200);
      expect(madeUp.statusCode).toBe(401);
      expect(issuer.jwksReads()).toBe(readsAfterFirstUse + 1);
    } finally {
      await fresh.close();
    }
  });
});

describe('GET /orders with an opaque access token (RFC 7662 introspection)', () => {
  it('an active token for this API is accepted; the API authenticates as RESOURCE_ID', async () => {
    await placeOrder('alice@example.com', 1);
    const now = Math.floor(Date.now() / 1000);
    issuer.setIntrospection('opaque-good', {
      active: true,
      aud: FAKE_RESOURCE_ID,
      iss: issuer.issuer,
      sub: 'u-alice',
      email: 'alice@example.com',
      scope: 'openid orders.read',
      token_type: 'Bearer',
      exp: now + 60,
    });

    const response = await listOrders('Bearer opaque-good');

    expect(response.statusCode).toBe(200);
    expect(response.json()).toHaveLength(1);
    expect(issuer.introspectionCallers().at(-1)).toBe(`${FAKE_RESOURCE_ID}:${FAKE_RESOURCE_SECRET}`);
  });

  it('is asked on every use (no cache), so a revoked token is refused at once', async () => {
    const now = Math.floor(Date.now() / 1000);
    const active = {
      active: true,
      aud: [FAKE_RESOURCE_ID],
      sub: 'u-alice',
      email: 'a@example.com',
      scope: 'orders.read',
      exp: now + 60,
    };
    issuer.setIntrospection('opaque-revoked-later', active);
    expect((await listOrders('Bearer opaque-revoked-later')).statusCode).toBe(200);

    issuer.setIntrospection('opaque-revoked-later', { active: false });
    const response = await listOrders('Bearer opaque-revoked-later');

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('error="invalid_token"');
  });

  it.each([
    ['inactive', { active: false }],
    [
      'for another audience',
      { active: true, aud: 'billing-api', email: 'a@example.com', scope: 'orders.read' },
    ],
    [
      'of another issuer',
      {
        active: true,
        aud: FAKE_RESOURCE_ID,
        iss: 'https://evil.example',
        email: 'a@example.com',
        scope: 'orders.read',
      },
    ],
    [
      'DPoP-bound',
      {
        active: true,
        aud: FAKE_RESOURCE_ID,
        token_type: 'DPoP',
        email: 'a@example.com',
        scope: 'orders.read',
      },
    ],
    [
      'expired',
      { active: true, aud: FAKE_RESOURCE_ID, exp: 1, email: 'a@example.com', scope: 'orders.read' },
    ],
  ])('%s: 401 invalid_token', async (name, introspection) => {
    issuer.setIntrospection(`opaque-${name}`, introspection);

    const response = await listOrders(`Bearer opaque-${name}`);

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('error="invalid_token"');
  });

  it('an active token without orders.read: 403 insufficient_scope', async () => {
    issuer.setIntrospection('opaque-narrow', {
      active: true,
      aud: FAKE_RESOURCE_ID,
      email: 'a@example.com',
      scope: 'openid',
    });

    const response = await listOrders('Bearer opaque-narrow');

    expect(response.statusCode).toBe(403);
    expect(challengeOf(response)).toContain('error="insufficient_scope"');
  });
});

describe('GET /orders/:id', () => {
  it("with a bearer token: the owner's order is 200, another user's order is 404", async () => {
    const own = await placeOrder('alice@example.com', 2);
    const foreign = await placeOrder('bob@example.com', 1);
    const token = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' });
    const headers = { authorization: `Bearer ${token}` };

    const mine = await app.inject({ method: 'GET', url: `/orders/${own}`, headers });
    const theirs = await app.inject({ method: 'GET', url: `/orders/${foreign}`, headers });

    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toMatchObject({ id: own, email: 'alice@example.com', total: '19.98' });
    expect(theirs.statusCode).toBe(404);
  });

  it('with a bad bearer token: 401 invalid_token; without orders.read: 403', async () => {
    const id = await placeOrder('alice@example.com', 1);
    const expired = await issuer.sign(accessTokenClaims(issuer.issuer, { exp: 1 }), { typ: 'at+jwt' });
    const narrow = await issuer.sign(accessTokenClaims(issuer.issuer, { scope: 'openid' }), {
      typ: 'at+jwt',
    });

    const bad = await app.inject({
      method: 'GET',
      url: `/orders/${id}`,
      headers: { authorization: `Bearer ${expired}` },
    });
    const scoped = await app.inject({
      method: 'GET',
      url: `/orders/${id}`,
      headers: { authorization: `Bearer ${narrow}` },
    });

    expect(bad.statusCode).toBe(401);
    expect(challengeOf(bad)).toContain('error="invalid_token"');
    expect(scoped.statusCode).toBe(403);
  });

  it('the API key still reads any order, and wins over a bearer header', async () => {
    const foreign = await placeOrder('bob@example.com', 1);
    const token = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' });

    const response = await app.inject({
      method: 'GET',
      url: `/orders/${foreign}`,
      headers: { ...withApiKey, authorization: `Bearer ${token}` },
    });

    expect(response.statusCode).toBe(200);
    expect(response.json().email).toBe('bob@example.com');
  });
});

describe('when the keys cannot be read', () => {
  it('a JWT cannot be judged: 503, not 401 (the caller did nothing wrong)', async () => {
    const closedIssuer = await startFakeIssuer();
    const lonely = await buildTestApp(database, { environment: oidcEnvironment(closedIssuer) });
    try {
      const token = await closedIssuer.sign(accessTokenClaims(closedIssuer.issuer), { typ: 'at+jwt' });
      await closedIssuer.close();

      const response = await lonely.inject({
        method: 'GET',
        url: '/orders',
        headers: { authorization: `Bearer ${token}` },
      });

      expect(response.statusCode).toBe(503);
    } finally {
      await lonely.close();
    }
  });
});
