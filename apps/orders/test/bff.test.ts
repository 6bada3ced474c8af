import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sessions } from '../src/db/schema.js';
import { findActiveSession } from '../src/repositories/sessions.js';
import { buildTestApp, testConfig } from './helpers/app.js';
import { countRows } from './helpers/database.js';
import { accessTokenClaims, FAKE_RESOURCE_ID, FAKE_RESOURCE_SECRET } from './helpers/fake-issuer.js';
import { insertTestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';
import { type StubUpstream, startStubUpstream } from './helpers/stub-upstream.js';

/**
 * The BFF routes and the session's token handling, with a stand-in provider (refresh grants with
 * rotation and reuse detection) and a stand-in upstream API that records the bearer token it gets.
 * The same flows against the real auth server are in signin.e2e.test.ts.
 */

let upstream: StubUpstream;

beforeAll(async () => {
  upstream = await startStubUpstream();
});
afterAll(async () => {
  await upstream?.close();
});
const fixture = useSignInApp({
  environment: () => ({
    SESSION_SECRET: 'bff-test-session-secret-0123456789abcdef',
    RESOURCE_ID: FAKE_RESOURCE_ID,
    RESOURCE_SECRET: FAKE_RESOURCE_SECRET,
    UPSTREAM_API_URL: upstream.url,
    UPSTREAM_TIMEOUT_MS: '500',
    OIDC_ROLE_CLAIM: 'roles',
  }),
  resetBeforeEach: true,
});
beforeEach(async () => {
  fixture.issuer.refuseRefresh(false);
  fixture.issuer.setAccessTokenTtl(300);
  upstream.respond((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
});

const config = () => testConfig(fixture.environment);
const hour = 3600_000;

/** A signed-in browser whose access token is still fresh. */
function freshSession(overrides: Parameters<typeof insertTestSession>[2] = {}) {
  return insertTestSession(fixture.database, config(), {
    tokens: {
      idToken: 'id-token',
      accessToken: 'fresh-access-token',
      refreshToken: fixture.issuer.issueRefreshToken(),
    },
    accessTokenExpiresAt: new Date(Date.now() + hour),
    accessTokenRefreshAt: new Date(Date.now() + hour / 2),
    ...overrides,
  });
}

/** A signed-in browser whose access token has expired, with a live refresh token at the provider. */
function expiredSession() {
  return insertTestSession(fixture.database, config(), {
    tokens: {
      idToken: 'id-token',
      accessToken: 'expired-access-token',
      refreshToken: fixture.issuer.issueRefreshToken(),
    },
    accessTokenExpiresAt: new Date(Date.now() - 1000),
    accessTokenRefreshAt: new Date(Date.now() - 2000),
  });
}

function bff(
  target: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  payload?: object,
) {
  return target.inject({ method, url, headers, ...(payload ? { payload } : {}) });
}

describe('X-CSRF', () => {
  it.each([
    ['missing', {}],
    ['0', { 'x-csrf': '0' }],
    ['true', { 'x-csrf': 'true' }],
  ])('%s → 400 before anything else, even with a valid session', async (_name, csrf) => {
    const { cookie } = await freshSession();

    for (const [method, url] of [
      ['GET', '/bff/orders'],
      ['GET', '/bff/user'],
      ['POST', '/bff/orders'],
    ] as const) {
      const response = await bff(
        fixture.app,
        method,
        url,
        { cookie, ...csrf },
        method === 'POST' ? { quantity: 1 } : undefined,
      );
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ statusCode: 400, message: expect.stringContaining('X-CSRF') });
    }
    expect(upstream.authorizations()).toEqual([]);
    expect(await countRows(fixture.database, 'orders')).toBe(0);
  });
});

describe('GET /bff/orders', () => {
  it('without a session: 401 JSON (the script navigates to /login), no redirect', async () => {
    const response = await bff(fixture.app, 'GET', '/bff/orders', { 'x-csrf': '1' });

    expect(response.statusCode).toBe(401);
    expect(response.headers.location).toBeUndefined();
    expect(response.json()).toEqual({ statusCode: 401, message: expect.any(String) });
  });

  it("sends the session's access token upstream and returns the upstream status and JSON body as they are", async () => {
    const { cookie } = await freshSession();
    upstream.respond((_request, response) => {
      response.writeHead(418, { 'content-type': 'application/json' }).end('{"teapot":true,"n":[1,2]}');
    });

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(418);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toBe('{"teapot":true,"n":[1,2]}');
    expect(upstream.authorizations().at(-1)).toBe('Bearer fresh-access-token');
  });

  it('an expired session (store expiry) is no session: 401', async () => {
    const { cookie } = await freshSession({ expiresAt: new Date(Date.now() - 1000) });

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(401);
  });

  it('upstream unreachable: 502 with a clear message', async () => {
    const closed = await startStubUpstream();
    await closed.close();
    const other = await buildTestApp(fixture.database, {
      environment: { ...fixture.environment, UPSTREAM_API_URL: closed.url },
    });
    try {
      const { cookie } = await freshSession();

      const response = await bff(other, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

      expect(response.statusCode).toBe(502);
      expect(response.json()).toEqual({ statusCode: 502, message: expect.stringMatching(/unreachable/) });
    } finally {
      await other.close();
    }
  });

  it('upstream too slow: 504 after UPSTREAM_TIMEOUT_MS', async () => {
    const { cookie } = await freshSession();
    upstream.respond(() => {
      // Never answers; the stub closes the socket when the test file ends.
    });

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(504);
    expect(response.json().message).toMatch(/did not answer in time/);
  });

  it('an upstream answer that is not JSON (a proxy error page): 502', async () => {
    const { cookie } = await freshSession();
    upstream.respond((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
    });

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(502);
    expect(response.json().message).toMatch(/not JSON/);
  });
});

describe('token refresh', () => {
  it('refreshes an expired access token with the refresh token and stores the rotated pair', async () => {
    const session = await expiredSession();
    const grantsBefore = fixture.issuer.refreshGrants();

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie: session.cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(200);
    expect(fixture.issuer.refreshGrants()).toBe(grantsBefore + 1);
    const sent = upstream.authorizations().at(-1)!;
    expect(sent).toMatch(/^Bearer ey/);
    expect(sent).not.toBe('Bearer expired-access-token');
    const row = await findActiveSession(fixture.database.handle.db, session.id, new Date());
    expect(row!.accessTokenExpiresAt!.getTime()).toBeGreaterThan(Date.now());
    expect(row!.refreshLease).toBeNull();

    // The stored (rotated) refresh token works for the next refresh: no reuse detection fired.
    await fixture.database.handle.db
      .update(sessions)
      .set({ accessTokenRefreshAt: new Date(Date.now() - 1000) })
      .where(eq(sessions.id, session.id));
    const again = await bff(fixture.app, 'GET', '/bff/orders', { cookie: session.cookie, 'x-csrf': '1' });
    expect(again.statusCode).toBe(200);
    expect(fixture.issuer.reuseDetections()).toBe(0);
  });

  it('twenty parallel calls of one session share one refresh (single-flight)', async () => {
    const session = await expiredSession();
    const grantsBefore = fixture.issuer.refreshGrants();

    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        bff(fixture.app, 'GET', '/bff/orders', { cookie: session.cookie, 'x-csrf': '1' }),
      ),
    );

    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(200));
    expect(fixture.issuer.refreshGrants()).toBe(grantsBefore + 1);
    expect(fixture.issuer.reuseDetections()).toBe(0);
    expect(new Set(upstream.authorizations().slice(-20)).size).toBe(1);
  });

  it('two instances sharing the store refresh once between them (lease on the session row)', async () => {
    const second = await buildTestApp(fixture.database, {
      environment: fixture.environment,
      deps: { refreshPollIntervalMs: 10 },
    });
    try {
      const session = await expiredSession();
      const grantsBefore = fixture.issuer.refreshGrants();
      // Hold the provider's answer so both instances are certainly waiting on the same refresh.
      let release!: () => void;
      fixture.issuer.holdRefreshes(new Promise<void>((resolve) => (release = resolve)));
      const calls = Array.from({ length: 20 }, (_, index) =>
        bff(index % 2 === 0 ? fixture.app : second, 'GET', '/bff/orders', {
          cookie: session.cookie,
          'x-csrf': '1',
        }),
      );
      setTimeout(release, 200);

      const responses = await Promise.all(calls);

      expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(200));
      expect(fixture.issuer.refreshGrants()).toBe(grantsBefore + 1);
      expect(fixture.issuer.reuseDetections()).toBe(0);
    } finally {
      fixture.issuer.holdRefreshes(undefined);
      await second.close();
    }
  });

  it('a refused refresh (invalid_grant) ends the session: 401, row deleted', async () => {
    const session = await expiredSession();
    fixture.issuer.refuseRefresh(true);

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie: session.cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(401);
    expect(await findActiveSession(fixture.database.handle.db, session.id, new Date())).toBeUndefined();
    const home = await fixture.app.inject({ method: 'GET', url: '/', headers: { cookie: session.cookie } });
    expect(home.statusCode).toBe(302);
  });

  it('an expired access token without a refresh token ends the session: 401', async () => {
    const session = await insertTestSession(fixture.database, config(), {
      tokens: { idToken: 'id-token', accessToken: 'expired' },
      accessTokenExpiresAt: new Date(Date.now() - 1000),
      accessTokenRefreshAt: new Date(Date.now() - 2000),
    });

    const response = await bff(fixture.app, 'GET', '/bff/orders', { cookie: session.cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(401);
    expect(await findActiveSession(fixture.database.handle.db, session.id, new Date())).toBeUndefined();
  });
});

describe('GET /bff/user', () => {
  it("returns the session's claims with their issued names, and the roles from OIDC_ROLE_CLAIM", async () => {
    const { cookie } = await freshSession({
      claims: {
        sub: 'u-alice',
        name: 'Alice Example',
        email: 'alice@example.com',
        roles: ['buyer', 'admin'],
      },
    });

    const response = await bff(fixture.app, 'GET', '/bff/user', { cookie, 'x-csrf': '1' });

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      sub: 'u-alice',
      name: 'Alice Example',
      roles: ['buyer', 'admin'],
      claims: {
        sub: 'u-alice',
        name: 'Alice Example',
        email: 'alice@example.com',
        roles: ['buyer', 'admin'],
      },
      signOutToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('without a session: 401', async () => {
    expect((await bff(fixture.app, 'GET', '/bff/user', { 'x-csrf': '1' })).statusCode).toBe(401);
  });
});

describe('POST /bff/orders', () => {
  it("places an order for the signed-in user's e-mail", async () => {
    const { cookie } = await freshSession();

    const response = await bff(
      fixture.app,
      'POST',
      '/bff/orders',
      { cookie, 'x-csrf': '1' },
      { quantity: 3 },
    );

    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      id: expect.any(Number),
      email: 'alice@example.com',
      quantity: 3,
      status: 'created',
    });
    expect(await countRows(fixture.database, 'orders')).toBe(1);
  });

  it('cannot choose the e-mail: an email member is rejected (400) and nothing is stored', async () => {
    const { cookie } = await freshSession();

    const response = await bff(
      fixture.app,
      'POST',
      '/bff/orders',
      { cookie, 'x-csrf': '1' },
      { quantity: 1, email: 'bob@example.com' },
    );

    expect(response.statusCode).toBe(400);
    expect(await countRows(fixture.database, 'orders')).toBe(0);
  });

  it('without an email claim: 403, nothing stored; without a session: 401', async () => {
    const { cookie } = await freshSession({ claims: { sub: 'u-nomail', name: 'No Mail' } });

    const noEmail = await bff(fixture.app, 'POST', '/bff/orders', { cookie, 'x-csrf': '1' }, { quantity: 1 });
    const noSession = await bff(fixture.app, 'POST', '/bff/orders', { 'x-csrf': '1' }, { quantity: 1 });

    expect(noEmail.statusCode).toBe(403);
    expect(noSession.statusCode).toBe(401);
    expect(await countRows(fixture.database, 'orders')).toBe(0);
  });
});

describe('OIDC_SAVE_TOKENS=false', () => {
  it('GET / says hasAccessToken false and the BFF answers 401 instead of calling the API', async () => {
    const other = await buildTestApp(fixture.database, {
      environment: { ...fixture.environment, OIDC_SAVE_TOKENS: 'false' },
    });
    try {
      const { cookie } = await insertTestSession(fixture.database, config(), {
        tokens: { idToken: 'id-token' },
      });
      const callsBefore = upstream.authorizations().length;

      const home = await other.inject({ method: 'GET', url: '/', headers: { cookie } });
      const orders = await bff(other, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

      expect(home.json()).toEqual({ name: 'Alice Example', sub: 'u-alice', hasAccessToken: false });
      expect(orders.statusCode).toBe(401);
      expect(upstream.authorizations()).toHaveLength(callsBefore);
    } finally {
      await other.close();
    }
  });
});

describe('with a JWT issued for this API', () => {
  it('the upstream receives exactly the stored token', async () => {
    const token = await fixture.issuer.sign(accessTokenClaims(fixture.issuer.issuer), { typ: 'at+jwt' });
    const { cookie } = await freshSession({
      tokens: { accessToken: token },
      accessTokenExpiresAt: new Date(Date.now() + hour),
      accessTokenRefreshAt: new Date(Date.now() + hour / 2),
    });

    await bff(fixture.app, 'GET', '/bff/orders', { cookie, 'x-csrf': '1' });

    expect(upstream.authorizations().at(-1)).toBe(`Bearer ${token}`);
  });
});
