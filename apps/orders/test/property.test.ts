import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../src/app.js';
import { buildTestApp, TEST_API_KEY, testConfig } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import {
  accessTokenClaims,
  FAKE_CLIENT_ID,
  FAKE_CLIENT_SECRET,
  FAKE_RESOURCE_SECRET,
  type FakeIssuer,
  startFakeIssuer,
} from './helpers/fake-issuer.js';
import { findFreePort } from './helpers/server-process.js';
import { insertTestSession } from './helpers/sessions.js';

/**
 * Property-based tests over every route of the orders service (enumerated from the router):
 * arbitrary path parameters, query strings, headers (API key, bearer tokens, session cookies,
 * X-CSRF), content types and bodies — random and mutations of valid requests — never produce a 5xx
 * or an unhandled rejection, and the service answers normally afterwards. Sign-in, BFF and bearer
 * routes are live: a stand-in provider serves discovery and the JWKS, and the BFF's upstream is this
 * service itself, listening. Plus the body size limit.
 */

const RUNS_PER_ROUTE = Number(process.env.PROPERTY_RUNS ?? 120);
const SESSION_SECRET = 'property-test-session-secret-0123456789abcdef';

let database: TestDatabase;
let issuer: FakeIssuer;
let app: FastifyInstance;
let validBearer: string;
let validSessionCookie: string;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  database = await createTestDatabase();
  issuer = await startFakeIssuer();
  const port = await findFreePort();
  const environment = {
    OIDC_ISSUER: issuer.issuer,
    OIDC_CLIENT_ID: FAKE_CLIENT_ID,
    OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
    RESOURCE_SECRET: FAKE_RESOURCE_SECRET,
    SESSION_SECRET,
    BASE_URL: 'https://orders.example.test',
    UPSTREAM_API_URL: `http://127.0.0.1:${port}/orders`,
    UPSTREAM_TIMEOUT_MS: '2000',
  };
  app = await buildTestApp(database, { environment, deps: { onRoute: collectRoute } });
  await app.listen({ host: '127.0.0.1', port });
  validBearer = await issuer.sign(accessTokenClaims(issuer.issuer), { typ: 'at+jwt' });
  const session = await insertTestSession(database, testConfig(environment), {
    tokens: { accessToken: validBearer, idToken: 'x.y.z' },
  });
  validSessionCookie = session.cookie;
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await app?.close();
  await issuer?.close();
  await database?.dispose();
});

/** Every (method, path) pair as Fastify registers it (its onRoute hook), HEAD left out. */
const registeredRoutes: Array<{ method: string; path: string }> = [];
function collectRoute(route: { method: string | string[]; url: string }): void {
  for (const method of ([] as string[]).concat(route.method)) {
    if (method !== 'HEAD') registeredRoutes.push({ method, path: route.url });
  }
}
function listRoutes(): Array<{ method: string; path: string }> {
  return registeredRoutes;
}

// ─── Arbitraries ────────────────────────────────────────────────────────────────────────────────

const text = fc.oneof(
  fc.constantFrom(
    'alice@example.com',
    'ALICE@Example.com',
    '1',
    '/orders',
    '//evil.example',
    'x'.repeat(300),
    '',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
const jsonScalar = fc.oneof(
  text,
  fc.integer(),
  fc.constantFrom(0, -1, 2147483647, 2147483648, 1e308, 1.5, Number.MAX_SAFE_INTEGER, null, true),
);

/** Valid bodies of POST /orders, POST /users and POST /bff/orders, with a key changed or dropped. */
const mutatedValidJson = fc
  .record({
    base: fc.constantFrom<Record<string, unknown>>(
      { email: 'alice@example.com', quantity: 2 },
      { email: 'bob@example.com', orders: [{ quantity: 1 }, { quantity: 3 }] },
      { quantity: 1 },
    ),
    key: fc.constantFrom('email', 'quantity', 'orders', '__proto__', 'constructor', 'extra'),
    value: fc.oneof(jsonScalar, fc.array(fc.record({ quantity: jsonScalar }), { maxLength: 3 })),
    change: fc.constantFrom('none', 'drop', 'set'),
  })
  .map(({ base, key, value, change }) => {
    const copy: Record<string, unknown> = JSON.parse(JSON.stringify(base));
    if (change === 'drop') delete copy[key];
    if (change === 'set') copy[key] = value;
    return JSON.stringify(copy);
  });

const formBody = fc
  .dictionary(fc.constantFrom('state', 'code', 'iss', 'error', 'logout_token', 'id_token', 'x'), text, {
    maxKeys: 4,
  })
  .map((values) => new URLSearchParams(values).toString());

const body = fc.oneof(
  { weight: 4, arbitrary: mutatedValidJson },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: formBody },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
);

const headerValue = fc.string({ maxLength: 60 }).filter((value) => !/[\r\n\0]/.test(value));

function headers() {
  return fc.record(
    {
      'content-type': fc.constantFrom(
        'application/json',
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        ';;',
      ),
      'x-api-key': fc.oneof(
        { weight: 3, arbitrary: fc.constant(TEST_API_KEY) },
        { weight: 1, arbitrary: headerValue },
      ),
      authorization: fc.oneof(
        fc.constant(`Bearer ${validBearer}`),
        headerValue.map((value) => `Bearer ${value}`),
        headerValue,
      ),
      cookie: fc.oneof(fc.constant(validSessionCookie), headerValue),
      'x-csrf': fc.oneof(fc.constant('1'), headerValue),
      'x-forwarded-host': headerValue,
      'x-forwarded-proto': headerValue,
      accept: headerValue,
    },
    { requiredKeys: [] },
  );
}

const segment = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('1', '0', '01', '-1', '99999999999', '..'),
);

function request(route: { method: string; path: string }) {
  return fc
    .record({
      params: fc.array(segment, { minLength: 3, maxLength: 3 }),
      query: fc.oneof(
        fc
          .dictionary(fc.constantFrom('returnUrl', 'id', 'x'), text, { maxKeys: 3 })
          .map((values) => new URLSearchParams(values).toString()),
        fc.string({ maxLength: 60 }),
      ),
      headers: headers(),
      body: fc.option(body, { nil: undefined }),
    })
    .map((generated): InjectOptions => {
      let index = 0;
      const path = route.path
        .replace(/:[A-Za-z]+/g, () => encodeURIComponent(generated.params[index++] ?? ''))
        .replace(/\*$/, encodeURIComponent(generated.params[2] ?? ''));
      const sendsBody = route.method !== 'GET' && route.method !== 'OPTIONS';
      return {
        method: route.method as InjectOptions['method'],
        url: `${path}?${generated.query}`,
        headers: Object.fromEntries(
          Object.entries(generated.headers).filter(([, value]) => value !== undefined),
        ) as Record<string, string>,
        ...(sendsBody && generated.body !== undefined ? { payload: generated.body } : {}),
      };
    });
}

async function expectHealthy() {
  expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  const placed = await app.inject({
    method: 'POST',
    url: '/orders',
    headers: { 'x-api-key': TEST_API_KEY },
    payload: { email: 'health@example.com', quantity: 1 },
  });
  expect(placed.statusCode).toBe(201);
}

describe('every route, arbitrary requests', () => {
  it('the router lists the endpoints this test is meant to cover', () => {
    const listed = listRoutes().map(({ method, path }) => `${method} ${path}`);
    for (const expected of [
      'POST /orders',
      'GET /orders/:id',
      'GET /orders',
      'POST /users',
      'GET /login',
      'POST /signin-oidc',
      'GET /logout',
      'POST /backchannel-logout',
      'GET /bff/orders',
      'POST /bff/orders',
    ]) {
      expect(listed).toContain(expected);
    }
  });

  it('no 5xx, no unhandled rejection, and the service still answers normally', async () => {
    const routes = listRoutes();
    const statuses = new Set<number>();
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(request(route), async (options) => {
          const response = await app.inject(options);
          statuses.add(response.statusCode);
          if (response.statusCode >= 500) {
            throw new Error(
              `${options.method} ${options.url} → ${response.statusCode}: ${response.body.slice(0, 300)}`,
            );
          }
        }),
        {
          numRuns: RUNS_PER_ROUTE,
          seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined,
        },
      );
      await expectHealthy();
    }
    expect(unhandled).toEqual([]);
    // The requests reach the handlers: successes, redirects and the refusals. (A 201 needs a valid
    // order body with the right API key, which random input only sometimes produces; the valid
    // order after every route is checked by expectHealthy instead.)
    for (const status of [200, 302, 400, 401, 403, 404]) {
      expect([...statuses], `status ${status} seen`).toContain(status);
    }
  }, 240_000);
});

// ─── Bad characters in every position ────────────────────────────────────────────────────────────

/** Percent-encoded: NUL and other controls, encoded lone surrogates, cut or overlong UTF-8. */
const badEncoded = fc.constantFrom(
  '%00',
  '%01',
  '%0A',
  '%0D',
  '%1F',
  '%7F',
  '%ED%A0%80',
  '%ED%B0%80',
  '%C0',
  '%E2%82',
);
/** As they arrive in header strings and JSON values: controls and lone surrogates. */
const badRaw = fc.constantFrom('\u0000', '\u0001', '\u000A', '\u001F', '\u007F', '\uD800', '\uDC00');
const positions = ['path', 'query-name', 'query-value', 'header', 'json-body', 'form-body'] as const;

function poisoned(route: { method: string; path: string }) {
  return fc
    .record({
      base: request(route),
      position: fc.constantFrom(...positions),
      encoded: badEncoded,
      raw: badRaw,
      index: fc.nat(),
      atEnd: fc.boolean(),
      header: fc.constantFrom(
        'x-api-key',
        'authorization',
        'cookie',
        'x-csrf',
        'dpop',
        'accept',
        'x-forwarded-host',
      ),
    })
    .map(({ base, position, encoded, raw, index, atEnd, header }): InjectOptions => {
      const url = String(base.url);
      const path = url.slice(0, url.indexOf('?'));
      // A fragment is never sent: drop it, so the bad characters land in what the server receives.
      const query = url.slice(url.indexOf('?') + 1).split('#')[0]!;
      const sendsBody = route.method !== 'GET' && route.method !== 'OPTIONS';
      const where = !sendsBody && position.endsWith('body') ? 'header' : position;
      const headers = { ...(base.headers as Record<string, string>) };
      if (where === 'path') {
        const segments = path.split('/');
        const at = 1 + (index % Math.max(1, segments.length - 1));
        segments[at] = atEnd ? `${segments[at] ?? ''}${encoded}` : `${encoded}${segments[at] ?? ''}`;
        return { ...base, url: `${segments.join('/')}?${query}` };
      }
      if (where === 'query-name' || where === 'query-value') {
        const pair = where === 'query-name' ? `x${encoded}=1` : `returnUrl=/app${encoded}`;
        return { ...base, url: `${path}?${atEnd ? `${query}&${pair}` : `${pair}&${query}`}` };
      }
      if (where === 'header') return { ...base, headers: { ...headers, [header]: `v${raw}v` } };
      if (where === 'json-body') {
        return {
          ...base,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ email: `a${raw}@example.com`, quantity: 1, state: raw }),
        };
      }
      return {
        ...base,
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: atEnd ? `state=s&logout_token=t${encoded}` : `${encoded}=x&state=s`,
      };
    });
}

describe('control characters, lone surrogates and percent-encoded NUL', () => {
  it('in every position of every route: 400 with the usual error body, never 5xx', async () => {
    const seen = new Set<string>();
    for (const route of listRoutes()) {
      await fc.assert(
        fc.asyncProperty(poisoned(route), async (options) => {
          // A dot segment after the bad text removes it when the URL is resolved (RFC 3986 §5.2.4,
          // as the request's URL is parsed): nothing bad is left to refuse, so the case says nothing.
          fc.pre(!/(^|\/)\.{1,2}(\/|$)/.test(String(options.url).split('?')[0] ?? ''));
          const response = await app.inject(options);
          const described = `${options.method} ${String(options.url).slice(0, 120)} → ${response.statusCode}: ${response.body.slice(0, 200)}`;
          // A bad body behind a credential guard (API key, X-CSRF, bearer) that already refused the
          // request in onRequest, or of a media type the route does not take (415), is never
          // parsed: that earlier refusal is the equally safe answer.
          const guarded = options.payload !== undefined && [401, 403, 415].includes(response.statusCode);
          if (response.statusCode !== 400 && !guarded) throw new Error(described);
          const body = response.json();
          if (body.statusCode !== response.statusCode || typeof body.message !== 'string')
            throw new Error(described);
          seen.add(`${route.method} ${route.path}`);
        }),
        {
          numRuns: Math.max(30, Math.floor(RUNS_PER_ROUTE / 2)),
          seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined,
        },
      );
    }
    expect(seen.size).toBe(listRoutes().length);
    await expectHealthy();
  }, 240_000);
});

describe('body size limit', () => {
  it(`a body over ${BODY_LIMIT_BYTES} bytes → 413 before it is read, at every body route`, async () => {
    const oversized = JSON.stringify({
      email: 'alice@example.com',
      quantity: 1,
      pad: 'a'.repeat(BODY_LIMIT_BYTES),
    });
    for (const url of ['/orders', '/users', '/bff/orders', '/signin-oidc', '/backchannel-logout']) {
      const response = await app.inject({
        method: 'POST',
        url,
        headers: {
          'content-type':
            url.startsWith('/signin') || url.startsWith('/back')
              ? 'application/x-www-form-urlencoded'
              : 'application/json',
          'x-api-key': TEST_API_KEY,
          'x-csrf': '1',
          cookie: validSessionCookie,
        },
        payload: oversized,
      });
      expect(response.statusCode, url).toBe(413);
    }
    const fits = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'x-api-key': TEST_API_KEY },
      payload: { email: 'fits@example.com', quantity: 1 },
    });
    expect(fits.statusCode).toBe(201);
  });
});
