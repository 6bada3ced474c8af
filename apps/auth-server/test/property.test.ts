import fc from 'fast-check';
import type { FastifyInstance, InjectOptions, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp } from './helpers/app.js';
import { SPA_REDIRECT_URI, TEST_SECRETS, WEB_REDIRECT_URI } from './helpers/seed.js';
import { pkcePair, signInSeed } from './sign-in-fixtures.js';

/**
 * Property-based tests over every route of the app (enumerated from the router, so a new route is
 * covered without editing this file): arbitrary path parameters, query strings, headers, content
 * types and bodies — random and mutations of valid requests — never produce a 5xx or an unhandled
 * rejection, and the server answers normally afterwards. Plus the body size limits.
 */

const RUNS_PER_ROUTE = Number(process.env.PROPERTY_RUNS ?? 120);

let started: Awaited<ReturnType<typeof startTestApp>>;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  started = await startTestApp({
    onRoute: collectRoute,
    seed: {
      ...signInSeed(),
      clients: [
        ...(signInSeed().clients ?? []),
        { client_id: 'tv', grant_types: ['urn:ietf:params:oauth:grant-type:device_code'], scope: 'openid' },
      ],
    },
  });
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await started?.close();
});

/** Every (method, path) pair as Fastify registers it (its onRoute hook), HEAD left out. */
const registeredRoutes: Array<{ method: string; path: string }> = [];
function collectRoute(route: RouteOptions): void {
  for (const method of ([] as string[]).concat(route.method)) {
    if (method !== 'HEAD') registeredRoutes.push({ method, path: route.url });
  }
}
function listRoutes(): Array<{ method: string; path: string }> {
  return registeredRoutes;
}

// ─── Arbitraries ────────────────────────────────────────────────────────────────────────────────

const KNOWN_PARAMETERS = [
  'grant_type',
  'client_id',
  'client_secret',
  'code',
  'redirect_uri',
  'code_verifier',
  'refresh_token',
  'scope',
  'resource',
  'audience',
  'device_code',
  'token',
  'token_type_hint',
  'response_type',
  'response_mode',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
  'max_age',
  'login_hint',
  'request_uri',
  'request',
  'id_token_hint',
  'post_logout_redirect_uri',
  'username',
  'password',
  'csrf',
  'decision',
  'user_code',
  'access_token',
  'subject_token',
  'subject_token_type',
  'actor_token',
  '__proto__',
  'constructor',
];

const { challenge } = pkcePair();
const MEANINGFUL_VALUES = [
  'web',
  'spa',
  'service',
  'tv',
  'consenting',
  'nobody',
  WEB_REDIRECT_URI,
  SPA_REDIRECT_URI,
  'code',
  'token',
  'form_post',
  'query',
  'S256',
  'plain',
  challenge,
  'openid',
  'openid profile email offline_access orders.read',
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:token-type:access_token',
  'https://api.example.test/orders',
  'none',
  'login consent',
  '-1',
  '0',
  '99999999999999999999',
  'alice',
  'approve',
  'deny',
  'BCDF-GHJK',
  'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  '',
];

const text = fc.oneof(
  fc.constantFrom(...MEANINGFUL_VALUES),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const parameterName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN_PARAMETERS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const parameters = fc.dictionary(parameterName, fc.oneof(text, fc.array(text, { maxLength: 3 })), {
  maxKeys: 8,
});

/** Valid requests of the main endpoints, which the generator mutates (a few keys changed or dropped). */
const VALID_BASES: Array<Record<string, string>> = [
  {
    response_type: 'code',
    client_id: 'web',
    redirect_uri: WEB_REDIRECT_URI,
    scope: 'openid profile',
    state: 's',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  },
  { grant_type: 'client_credentials', scope: 'orders.read' },
  { grant_type: 'client_credentials', client_id: 'service', client_secret: TEST_SECRETS.service },
  { grant_type: 'refresh_token', refresh_token: 'x' },
  { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'tv', device_code: 'x' },
  { client_id: 'tv', scope: 'openid' },
  { token: 'x', token_type_hint: 'refresh_token' },
  { client_id: 'consenting', post_logout_redirect_uri: 'https://consenting.example.test/signed-out' },
];

const mutatedValid = fc
  .record({
    base: fc.constantFrom(...VALID_BASES),
    overrides: fc.dictionary(fc.constantFrom(...KNOWN_PARAMETERS), text, { maxKeys: 2 }),
    drop: fc.option(fc.constantFrom(...KNOWN_PARAMETERS), { nil: undefined }),
  })
  .map(({ base, overrides, drop }) => {
    const merged: Record<string, string> = { ...base, ...overrides };
    if (drop !== undefined) delete merged[drop];
    return merged;
  });

function toSearchParams(values: Record<string, string | string[]>): URLSearchParams {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, item);
  }
  return search;
}

const CONTENT_TYPES = [
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'APPLICATION/X-WWW-FORM-URLENCODED',
  'application/json',
  'application/jose',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  ';;;',
  'application/x-www-form-urlencoded; charset=latin1',
];

const body = fc.oneof(
  parameters.map((values) => toSearchParams(values).toString()),
  mutatedValid.map((values) => toSearchParams(values).toString()),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
);

const authorization = fc.oneof(
  fc.constant(undefined),
  fc.constant(basicAuthorization('web', TEST_SECRETS.web)),
  fc.constant(basicAuthorization('service', TEST_SECRETS.service)),
  fc.constant(basicAuthorization('https://api.example.test/orders', TEST_SECRETS.ordersApi)),
  fc.tuple(text, text).map(([id, secret]) => basicAuthorization(id || 'x', secret)),
  fc.string({ maxLength: 60 }).map((value) => `Basic ${value}`),
  fc.string({ maxLength: 60 }).map((value) => `Bearer ${value}`),
  fc.string({ maxLength: 60 }).map((value) => `DPoP ${value}`),
  fc.string({ maxLength: 60 }),
);

const headerValue = fc.string({ maxLength: 60 }).filter((value) => !/[\r\n\0]/.test(value));
const headers = fc.record(
  {
    'content-type': fc.constantFrom(...CONTENT_TYPES),
    authorization,
    cookie: fc.oneof(
      headerValue,
      fc
        .tuple(fc.constantFrom('__Host-op_browser', '__Host-op_session', 'op_browser', 'x'), headerValue)
        .map(([name, value]) => `${name}=${value}`),
    ),
    dpop: headerValue,
    origin: fc.constantFrom('https://spa.example.test', 'null', 'https://evil.example'),
    accept: headerValue,
    'x-forwarded-for': headerValue,
    'x-forwarded-proto': headerValue,
    host: headerValue,
  },
  { requiredKeys: [] },
);

const segment = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('styles.css', 'form-post.js', '..', '%'),
);

function request(route: { method: string; path: string }) {
  return fc
    .record({
      params: fc.array(segment, { minLength: 4, maxLength: 4 }),
      query: fc.oneof(
        parameters.map((values) => toSearchParams(values).toString()),
        mutatedValid.map((values) => toSearchParams(values).toString()),
        fc.string({ maxLength: 80 }),
      ),
      headers,
      body: fc.option(body, { nil: undefined }),
      remoteAddress: fc.constantFrom('127.0.0.1', '203.0.113.1', '::1', '2001:db8::1'),
    })
    .map((generated): InjectOptions => {
      let index = 0;
      const path = route.path
        .replace(/:[A-Za-z]+/g, () => encodeURIComponent(generated.params[index++] ?? ''))
        .replace(/\*$/, encodeURIComponent(generated.params[3] ?? ''));
      const sendsBody = route.method !== 'GET' && route.method !== 'OPTIONS';
      const cleanHeaders = Object.fromEntries(
        Object.entries(generated.headers).filter(([, value]) => value !== undefined),
      ) as Record<string, string>;
      return {
        method: route.method as InjectOptions['method'],
        url: `${path}?${generated.query}`,
        headers: cleanHeaders,
        remoteAddress: generated.remoteAddress,
        ...(sendsBody && generated.body !== undefined ? { payload: generated.body } : {}),
      };
    });
}

async function expectHealthy(app: FastifyInstance) {
  expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  expect((await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).statusCode).toBe(
    200,
  );
  const token = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
    payload: form({ grant_type: 'client_credentials', scope: 'orders.read' }),
  });
  expect(token.statusCode).toBe(200);
}

describe('every route, arbitrary requests', () => {
  it('the router lists the endpoints this test is meant to cover', () => {
    const listed = listRoutes().map(({ method, path }) => `${method} ${path}`);
    for (const expected of [
      'POST /token',
      'GET /authorize',
      'POST /interaction/:id/login',
      'POST /device_authorization',
      'POST /device',
      'GET /logout',
      'POST /par',
      'POST /revoke',
      'POST /introspect',
      'GET /userinfo',
      'GET /jwks',
    ]) {
      expect(listed).toContain(expected);
    }
  });

  it('no 5xx, no unhandled rejection, and the server still answers normally', async () => {
    const routes = listRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(20);
    const statuses = new Set<number>();
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(request(route), async (options) => {
          const response = await started.app.inject(options);
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
      await expectHealthy(started.app);
    }
    expect(unhandled).toEqual([]);
    // The requests reach the handlers (not only the parsers): successes, redirects and every kind of refusal.
    for (const status of [200, 303, 400, 401, 403, 404]) {
      expect([...statuses], `status ${status} seen`).toContain(status);
    }
  }, 240_000);
});

// Bad bytes in any position of any route → 400 in the area's usual body, never a
// 5xx (PostgreSQL refuses NUL) and never a page or SQL statement that sees them.
describe('control characters, lone surrogates and bytes that are not UTF-8', () => {
  const BAD_ESCAPES = [
    ['percent-encoded NUL', '%00'],
    ['a C0 control', '%01'],
    ['unit separator', '%1F'],
    ['DEL', '%7F'],
    ['a C1 control', '%C2%85'],
    ['a lone surrogate (CESU bytes)', '%ED%A0%80'],
    ['a byte that is not UTF-8', '%FF'],
    ['a truncated sequence', '%C3'],
  ] as const;
  // Pages: the issuer landing page (/), the sign-in flow, the device page, logout, /account, the
  // operator console (/admin, not its API), the language switcher, the favicon.
  const BROWSER_AREA =
    /^\/(authorize|interaction\/|device$|logout|assets\/|account|admin(?!\/api\/)|language$|favicon|$)/;
  const ADMIN_API_AREA = /^\/admin\/api\//;
  const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
  let requestCounter = 0;

  function positions(route: { method: string; path: string }, bad: string): InjectOptions[] {
    const method = route.method as InjectOptions['method'];
    const fill = (value: string) =>
      route.path.replace(/:[A-Za-z]+/g, value).replace(/\*$/, value === 'x' ? 'styles.css' : value);
    const clean = fill('x');
    const list: InjectOptions[] = [
      { method, url: `${clean}?client_id=${bad}` },
      { method, url: `${clean}?state=a${bad}b&client_id=web` },
      { method, url: `${clean}?${bad}=1` },
      { method, url: clean, headers: { cookie: `__Host-op_session=${bad}` } },
    ];
    if (route.path.includes(':') || route.path.endsWith('*')) {
      list.push({ method, url: fill(bad) }, { method, url: fill(`a${bad}`) });
    }
    if (method !== 'GET' && method !== 'OPTIONS') {
      list.push(
        { method, url: clean, headers: FORM, payload: `client_id=web&username=${bad}` },
        { method, url: clean, headers: FORM, payload: `grant_type=a${bad}&${bad}x=1` },
      );
    }
    return list;
  }

  it.each(BAD_ESCAPES)(
    '%s → 400 at every position of every route',
    async (_name, bad) => {
      const seen: string[] = [];
      for (const route of listRoutes()) {
        for (const options of positions(route, bad)) {
          const browser = BROWSER_AREA.test(route.path);
          // A browser asks for HTML; the router answers an undecodable path by that alone.
          const headers = { ...(browser ? { accept: BROWSER_ACCEPT } : {}), ...options.headers };
          // A fresh network each time: the device code entry's rate limit counts per address (/64).
          requestCounter += 1;
          const remoteAddress = `2001:db8:${requestCounter.toString(16)}::77`;
          const response = await started.app.inject({ ...options, headers, remoteAddress });
          const where = `${options.method} ${options.url} ${String(options.payload ?? '')} ${JSON.stringify(headers)}`;
          const adminApi = ADMIN_API_AREA.test(route.path);
          // The admin API authenticates before it reads a body: without a token, 401 comes first.
          expect(response.statusCode, where).toBe(adminApi && options.payload !== undefined ? 401 : 400);
          if (browser) {
            expect(response.headers['content-type'], where).toMatch(/^text\/html/);
          } else if (adminApi) {
            // RFC 9457 problem details; a path the router cannot decode never reaches the area.
            expect(response.headers['content-type'], where).toMatch(/^application\/(problem\+)?json/);
            if (response.statusCode === 400) expect(response.json().error, where).toBe('invalid_request');
          } else {
            expect(response.headers['content-type'], where).toMatch(/^application\/json/);
            expect(response.json().error, where).toBe('invalid_request');
          }
          seen.push(where);
        }
      }
      expect(seen.length).toBeGreaterThan(100);
      await expectHealthy(started.app);
    },
    120_000,
  );

  it('a lone surrogate in a JSON body or a raw form value → 400, never 5xx', async () => {
    for (const route of listRoutes().filter(({ method }) => method === 'POST')) {
      const url = route.path.replace(/:[A-Za-z]+/g, 'x');
      const json = await started.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: '{"client_id":"\\ud800"}',
        remoteAddress: '192.0.2.78',
      });
      expect(json.statusCode, `POST ${url} JSON`).toBeGreaterThanOrEqual(400);
      expect(json.statusCode, `POST ${url} JSON`).toBeLessThan(500);
      const raw = await started.app.inject({
        method: 'POST',
        url,
        headers: FORM,
        payload: Buffer.concat([Buffer.from('client_id='), Buffer.from([0xff, 0xfe]), Buffer.from('&a=1')]),
        remoteAddress: '192.0.2.78',
      });
      // The admin API authenticates before it reads a body: without a token, 401 comes first.
      expect(raw.statusCode, `POST ${url} raw bytes`).toBe(url.startsWith('/admin/api/') ? 401 : 400);
    }
  }, 60_000);
});

describe('body size limits', () => {
  const oversized = (bytes: number) => `grant_type=client_credentials&pad=${'a'.repeat(bytes)}`;

  it.each([
    ['/token', 16 * 1024],
    ['/revoke', 16 * 1024],
    ['/introspect', 16 * 1024],
    ['/par', 16 * 1024],
    ['/device_authorization', 16 * 1024],
  ])('POST %s over %d bytes → 413 invalid_request, before parsing', async (url, limit) => {
    const response = await started.app.inject({
      method: 'POST',
      url,
      headers: FORM,
      payload: oversized(limit),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toBe('invalid_request');
    const fits = await started.app.inject({
      method: 'POST',
      url,
      headers: FORM,
      payload: oversized(limit - 1000),
    });
    expect(fits.statusCode).not.toBe(413);
  });

  it.each(['/authorize', '/logout', '/device', '/interaction/x/login'])(
    'POST %s over the 64 KiB default → 413',
    async (url) => {
      const response = await started.app.inject({
        method: 'POST',
        url,
        headers: FORM,
        payload: oversized(64 * 1024),
        // Not the address the property test spent the user-code entry limit of /device with.
        remoteAddress: '192.0.2.200',
      });
      expect(response.statusCode).toBe(413);
    },
  );
});
