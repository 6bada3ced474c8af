import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import {
  type AssertionOptions,
  assertionParams,
  type ClientKey,
  clientKey,
  keyClient,
} from './helpers/client-keys.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';
import { testSeed } from './helpers/seed.js';

/**
 * `private_key_jwt` (RFC 7523 §2.2 and §3, OIDC Core §9). Each assertion rule has
 * a failing case; a jti is single-use across instances sharing the database.
 */

let key: ClientKey;
let otherKey: ClientKey;
let rsaKey: ClientKey;
let database: TestDatabase;
let app: TestApp;
let secondApp: TestApp;
const closers: Array<() => Promise<void>> = [];

function seedWithKeyClients() {
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    keyClient('jwt-client', key),
    keyClient('other-client', otherKey),
    keyClient('rsa-client', rsaKey),
  ];
  return seed;
}

beforeAll(async () => {
  [key, otherKey, rsaKey] = await Promise.all([clientKey('ES256'), clientKey('EdDSA'), clientKey('RS256')]);
  database = await createTestDatabase();
  const seed = seedWithKeyClients();
  const first = await startTestApp({ database, seed });
  // On PostgreSQL the second instance has its own connection pool, like a second process.
  const secondDatabase =
    databaseKind === 'postgres' ? { ...database, handle: await database.openAnother() } : database;
  const second = await startTestApp({ database: secondDatabase, seed });
  ({ app } = first);
  secondApp = second.app;
  closers.push(second.close, first.close);
});
afterAll(async () => {
  for (const close of closers) await close();
  await database.drop();
});

function clientCredentials(target: TestApp, params: Record<string, string>) {
  return target.inject({
    method: 'POST',
    url: '/token',
    headers: FORM,
    payload: form({ grant_type: 'client_credentials', scope: 'orders.read', ...params }),
  });
}

async function tokenStatus(clientId: string, signer: ClientKey, options: AssertionOptions = {}) {
  const response = await clientCredentials(app, await assertionParams(clientId, signer, options));
  return { status: response.statusCode, error: response.json().error as string | undefined };
}

describe('private_key_jwt at the token endpoint', () => {
  it('issues tokens for an assertion signed by the client key, with aud the issuer or the endpoint URL', async () => {
    expect(await tokenStatus('jwt-client', key)).toEqual({ status: 200, error: undefined });
    expect(await tokenStatus('jwt-client', key, { aud: `${TEST_ISSUER}/token` })).toMatchObject({
      status: 200,
    });
    expect(await tokenStatus('other-client', otherKey)).toMatchObject({ status: 200 });
    // RS256 is accepted outside the FAPI 2.0 profile.
    expect(await tokenStatus('rsa-client', rsaKey)).toMatchObject({ status: 200 });
  });

  it('works without client_id in the body: the assertion names the client (RFC 7523 §2.2)', async () => {
    const { client_id: _id, ...params } = await assertionParams('jwt-client', key);
    expect((await clientCredentials(app, params)).statusCode).toBe(200);
  });

  it.each([
    ['a wrong aud', { aud: 'https://elsewhere.example.test' }],
    ['the aud of another endpoint', { aud: `${TEST_ISSUER}/introspect` }],
    ['an expired assertion', { expiresIn: -60 }],
    ['no exp', { expiresIn: null }],
    ['an exp more than five minutes ahead', { expiresIn: 600 }],
    ['iss not the client', { iss: 'other-client' }],
    ['sub not the client', { sub: 'other-client' }],
  ] as const)('refuses %s with invalid_client', async (_name, options) => {
    expect(await tokenStatus('jwt-client', key, options)).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('refuses an assertion signed with another client key', async () => {
    expect(await tokenStatus('jwt-client', otherKey)).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('refuses HS256 and alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: 'jwt-client', sub: 'jwt-client', aud: TEST_ISSUER, exp: now + 60 };
    const hs256 = await new SignJWT({ ...claims, jti: randomUUID() })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!'));
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ ...claims, jti: randomUUID() }),
    ).toString('base64url')}.`;
    for (const assertion of [hs256, unsigned]) {
      const response = await clientCredentials(app, {
        client_id: 'jwt-client',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
      });
      expect(response.statusCode).toBe(401);
    }
  });

  it('refuses a jti seen before, on the same instance and on another one', async () => {
    const params = await assertionParams('jwt-client', key);
    expect((await clientCredentials(app, params)).statusCode).toBe(200);
    const again = await clientCredentials(app, params);
    expect([again.statusCode, again.json().error]).toEqual([401, 'invalid_client']);

    const crossInstance = await assertionParams('jwt-client', key);
    expect((await clientCredentials(secondApp, crossInstance)).statusCode).toBe(200);
    const replayedElsewhere = await clientCredentials(app, crossInstance);
    expect([replayedElsewhere.statusCode, replayedElsewhere.json().error]).toEqual([401, 'invalid_client']);
  });

  it('refuses a concurrent replay: exactly one of two instances accepts the same assertion', async () => {
    const params = await assertionParams('jwt-client', key);
    const statuses = await Promise.all([
      clientCredentials(app, params),
      clientCredentials(secondApp, params),
    ]);
    expect(statuses.map((response) => response.statusCode).sort()).toEqual([200, 401]);
  });
});

describe('private_key_jwt with jwks_uri', () => {
  let jwksServer: Server;
  let served: ClientKey[];
  let fetches = 0;
  let uriApp: TestApp;

  beforeAll(async () => {
    served = [await clientKey('ES256')];
    jwksServer = createServer((request, response) => {
      fetches += 1;
      if (request.url === '/never') return; // never answers: the fetch must time out
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: served.map((entry) => entry.publicJwk) }));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
    const seed = testSeed();
    seed.clients = [
      ...(seed.clients ?? []),
      { ...keyClient('uri-client', served[0] as ClientKey), jwks: undefined, jwks_uri: `${base}/jwks` },
      { ...keyClient('slow-client', served[0] as ClientKey), jwks: undefined, jwks_uri: `${base}/never` },
    ];
    // A short cooldown and timeout so the test need not wait for the defaults.
    const started = await startTestApp({
      seed,
      clientKeys: { refreshCooldownMs: 1000, fetchTimeoutMs: 500 },
    });
    uriApp = started.app;
    closers.unshift(started.close);
  });
  afterAll(() => new Promise<void>((resolve) => jwksServer.close(() => resolve())));

  it('fetches the keys, caches them, and re-reads the set when a kid is unknown', async () => {
    const first = served[0] as ClientKey;
    for (let i = 0; i < 2; i += 1) {
      const response = await clientCredentials(uriApp, await assertionParams('uri-client', first));
      expect(response.statusCode).toBe(200);
    }
    expect(fetches).toBe(1);
    // The client rotates its key; the server learns it from jwks_uri on the unknown kid.
    const rotated = await clientKey('ES256');
    served = [rotated];
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const response = await clientCredentials(uriApp, await assertionParams('uri-client', rotated));
    expect(response.statusCode).toBe(200);
    expect(fetches).toBe(2);
  });

  it('gives up on a jwks_uri that does not answer in time: invalid_client', async () => {
    const started = Date.now();
    const response = await clientCredentials(
      uriApp,
      await assertionParams('slow-client', served[0] as ClientKey),
    );
    expect([response.statusCode, response.json().error]).toEqual([401, 'invalid_client']);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
