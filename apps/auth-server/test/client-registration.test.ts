import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClientsAdmin, RegisteredClientNotFoundError } from '../src/admin/clients-admin.js';
import { createClientKeySource } from '../src/plugins/client-authentication.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { parseSeedDocument, SeedError } from '../src/seed.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { testSeed } from './helpers/seed.js';

/**
 * Dynamic Client Registration (RFC 7591) and its management (RFC 7592) under the seed's
 * `client_registration` policy: the gate, the caps, every RFC 7591 §3.2.2 error that applies, the
 * registration access token, and registered clients living beside the seed's. openid-client as
 * the counterpart is in openid-client.e2e.test.ts; the MCP SDK's client in mcp-client tests.
 */

const INITIAL_ACCESS_TOKEN = 'initial-access-token-for-tests-0123';
const REDIRECT_URI = 'http://127.0.0.1:8123/callback';

function registrationSeed(
  overrides: Partial<NonNullable<SeedDocument['client_registration']>> = {},
): SeedDocument {
  return {
    ...testSeed(),
    client_registration: {
      initial_access_tokens: [INITIAL_ACCESS_TOKEN],
      scope: 'openid profile orders.read',
      grant_types: ['authorization_code', 'refresh_token'],
      unused_client_ttl_days: 1,
      ...overrides,
    },
  };
}

let clockOffsetSeconds = 0;
const clock = { nowSeconds: () => Math.floor(Date.now() / 1000) + clockOffsetSeconds };

let database: TestDatabase;
let app: TestApp;
let closeApp: () => Promise<void>;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app, close: closeApp } = await startTestApp({
    database,
    seed: registrationSeed(),
    clock,
    env: { REGISTRATION_RATE_LIMIT_PER_MINUTE: '1000' },
  }));
});
afterAll(async () => {
  await closeApp?.();
  await database?.drop();
});
beforeEach(() => {
  clockOffsetSeconds = 0;
});

function register(body: unknown, token: string | null = INITIAL_ACCESS_TOKEN, target: TestApp = app) {
  return target.inject({
    method: 'POST',
    url: '/register',
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    payload: JSON.stringify(body),
  });
}

const PUBLIC_AGENT = {
  client_name: 'Agent',
  redirect_uris: [REDIRECT_URI],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  scope: 'openid orders.read',
};

async function registered(body: unknown = PUBLIC_AGENT) {
  const response = await register(body);
  expect(response.statusCode).toBe(201);
  return response.json() as {
    client_id: string;
    client_secret?: string;
    registration_access_token: string;
    registration_client_uri: string;
  };
}

function manage(method: 'GET' | 'PUT' | 'DELETE', uri: string, token: string, body?: unknown) {
  return app.inject({
    method,
    url: new URL(uri).pathname,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

describe('the seed member client_registration', () => {
  it('needs a gate: initial access tokens, or open said out loud', () => {
    const ungated = { ...registrationSeed(), client_registration: { scope: 'openid' } };

    expect(() => parseSeedDocument(ungated)).toThrow(SeedError);
    expect(() =>
      parseSeedDocument({ ...ungated, client_registration: { scope: 'openid', open: true } }),
    ).not.toThrow();
  });
});

describe('discovery advertises registration exactly when the seed enables it', () => {
  it('names registration_endpoint with client_registration', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();

    expect(metadata.registration_endpoint).toBe(`${TEST_ISSUER}/register`);
  });

  it('names nothing, and has no route, without it', async () => {
    const plain = await startTestApp();
    try {
      const metadata = (
        await plain.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
      ).json();
      const response = await register(PUBLIC_AGENT, INITIAL_ACCESS_TOKEN, plain.app);

      expect(metadata).not.toHaveProperty('registration_endpoint');
      expect(response.statusCode).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('POST /register (RFC 7591 §3)', () => {
  it('without an initial access token, or with a wrong one: 401 invalid_token', async () => {
    for (const token of [null, 'not-the-initial-access-token']) {
      const response = await register(PUBLIC_AGENT, token);

      expect(response.statusCode).toBe(401);
      expect(response.json().error).toBe('invalid_token');
      expect(response.headers['www-authenticate']).toContain('Bearer');
    }
  });

  it('registers a public client: its id, a registration access token and URI, the metadata echoed', async () => {
    const response = await register(PUBLIC_AGENT);

    expect(response.statusCode).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json();
    expect(body).toMatchObject({
      client_id: expect.stringMatching(/^dyn_[A-Za-z0-9_-]{22}$/),
      registration_access_token: expect.any(String),
      registration_client_uri: `${TEST_ISSUER}/register/${body.client_id}`,
      client_id_issued_at: expect.any(Number),
      ...PUBLIC_AGENT,
      response_types: ['code'],
    });
    expect(body).not.toHaveProperty('client_secret');
    const client = await app.stores.clients.findClient(body.client_id);
    expect(client).toMatchObject({ clientName: 'Agent', skipConsent: false, redirectUris: [REDIRECT_URI] });
  });

  it('gives a confidential client a secret that never expires, stored only as a hash', async () => {
    const body = await registered({ redirect_uris: ['https://app.example.test/cb'] });

    expect(body.client_secret).toEqual(expect.any(String));
    expect(body).toMatchObject({
      client_secret_expires_at: 0,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const client = await app.stores.clients.findClient(body.client_id);
    expect(client?.secretHash).toMatch(/^hmac-sha256\$/);
  });

  it('a confidential client authenticates at the token endpoint with the secret it was given', async () => {
    const body = await registered({ redirect_uris: ['https://app.example.test/cb'] });

    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, authorization: basicAuthorization(body.client_id, body.client_secret ?? '') },
      payload: form({
        grant_type: 'authorization_code',
        code: 'no-such-code',
        redirect_uri: 'https://app.example.test/cb',
      }),
    });

    expect(response.json().error).toBe('invalid_grant');
  });

  it.each([
    ['a scope beyond the cap', 'invalid_client_metadata', { ...PUBLIC_AGENT, scope: 'openid admin.write' }],
    [
      'a grant type beyond the cap',
      'invalid_client_metadata',
      { ...PUBLIC_AGENT, grant_types: ['authorization_code', 'client_credentials'] },
    ],
    [
      'an http redirect URI off loopback',
      'invalid_redirect_uri',
      { ...PUBLIC_AGENT, redirect_uris: ['http://a.example/cb'] },
    ],
    ['no redirect URI for the code flow', 'invalid_redirect_uri', { ...PUBLIC_AGENT, redirect_uris: [] }],
    [
      'a software statement',
      'unapproved_software_statement',
      { ...PUBLIC_AGENT, software_statement: 'a.b.c' },
    ],
  ])('refuses %s: 400 %s', async (_label, error, body) => {
    const response = await register(body);

    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe(error);
  });

  it('counts registrations and refusals in the audit metrics', async () => {
    await registered();
    await register({ ...PUBLIC_AGENT, scope: 'admin.write' });

    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;

    expect(metrics).toMatch(/auth_server_audit_events_total\{event="auth\.client\.registered"\} [1-9]/);
    expect(metrics).toMatch(
      /auth_server_audit_events_total\{event="auth\.client\.registration_refused"\} [1-9]/,
    );
  });
});

describe('/register/<client_id> (RFC 7592 §2)', () => {
  it('reads the registration with its registration access token', async () => {
    const body = await registered();

    const response = await manage('GET', body.registration_client_uri, body.registration_access_token);

    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ client_id: body.client_id, client_name: 'Agent' });
    expect(response.json()).not.toHaveProperty('registration_access_token');
  });

  it("refuses another client's registration access token: 401 invalid_token", async () => {
    const mine = await registered();
    const theirs = await registered();

    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await manage(method, theirs.registration_client_uri, mine.registration_access_token, {
        ...PUBLIC_AGENT,
        client_id: theirs.client_id,
      });
      expect(response.statusCode, method).toBe(401);
      expect(response.json().error).toBe('invalid_token');
    }
    expect(await app.stores.clients.findClient(theirs.client_id)).not.toBeNull();
  });

  it('never reaches a seed client, whatever the token', async () => {
    const mine = await registered();

    const response = await manage('DELETE', `${TEST_ISSUER}/register/web`, mine.registration_access_token);

    expect(response.statusCode).toBe(401);
    expect(await app.stores.clients.findClient('web')).not.toBeNull();
  });

  it('updates the metadata under the same caps, and deletes the client', async () => {
    const body = await registered();
    const uri = body.registration_client_uri;
    const token = body.registration_access_token;

    const beyond = await manage('PUT', uri, token, {
      ...PUBLIC_AGENT,
      client_id: body.client_id,
      scope: 'admin.write',
    });
    const updated = await manage('PUT', uri, token, {
      ...PUBLIC_AGENT,
      client_id: body.client_id,
      client_name: 'Renamed',
    });
    const renamed = await app.stores.clients.findClient(body.client_id);
    const deleted = await manage('DELETE', uri, token);
    const after = await manage('GET', uri, token);

    expect(beyond.json().error).toBe('invalid_client_metadata');
    expect(updated.statusCode).toBe(200);
    expect(renamed?.clientName).toBe('Renamed');
    expect(deleted.statusCode).toBe(204);
    expect(after.statusCode).toBe(401);
    expect(await app.stores.clients.findClient(body.client_id)).toBeNull();
  });
});

describe('registered clients beside the seed', () => {
  it('survive a reseed (the seed reconciles only its own clients)', async () => {
    const body = await registered();

    await app.reseed(registrationSeed());

    expect(await app.stores.clients.findClient(body.client_id)).not.toBeNull();
  });

  it('are deleted once unused beyond unused_client_ttl_days (swept at the next registration)', async () => {
    const old = await registered();

    clockOffsetSeconds = 2 * 86_400;
    await registered();

    expect(await app.stores.clients.findClient(old.client_id)).toBeNull();
  });
});

describe('open registration and the per-IP rate limit', () => {
  it('open: true needs no initial access token; the limit refuses the next one with 429', async () => {
    const open = await startTestApp({
      seed: registrationSeed({ open: true, initial_access_tokens: [] }),
      env: { REGISTRATION_RATE_LIMIT_PER_MINUTE: '2' },
    });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 3; index++) {
        statuses.push((await register(PUBLIC_AGENT, null, open.app)).statusCode);
      }
      const metrics = (await open.app.inject({ method: 'GET', url: '/metrics' })).body;

      expect(statuses).toEqual([201, 201, 429]);
      expect(metrics).toMatch(/auth_server_rate_limit_refusals_total\{limit="registration_ip"\} [1-9]/);
    } finally {
      await open.close();
    }
  });
});

describe('the clients admin (clients list, delete, export)', () => {
  it('lists registered clients only, never a seed client', async () => {
    const body = await registered();

    const listed = await createClientsAdmin(app.database.db).list();

    expect(listed.map((client) => client.clientId)).toContain(body.client_id);
    expect(listed.map((client) => client.clientId)).not.toContain('web');
  });

  it('exports a seed entry that adopts the client when the seed names it', async () => {
    const body = await registered({ ...PUBLIC_AGENT, token_endpoint_auth_method: 'client_secret_basic' });
    const admin = createClientsAdmin(app.database.db);

    const entry = await admin.exportSeedEntry(body.client_id);
    const seed = registrationSeed();
    await app.reseed({ ...seed, clients: [...(seed.clients ?? []), entry] });

    expect(entry).toMatchObject({
      client_id: body.client_id,
      client_name: 'Agent',
      redirect_uris: [REDIRECT_URI],
    });
    expect(entry.client_secret_hash).toMatch(/^hmac-sha256\$/);
    expect((await admin.list()).map((client) => client.clientId)).not.toContain(body.client_id);
    expect(await app.stores.clients.findClient(body.client_id)).not.toBeNull();
    await app.reseed(registrationSeed());
  });

  it('deletes a registered client, and refuses a seed client', async () => {
    const body = await registered();
    const admin = createClientsAdmin(app.database.db);

    await admin.delete(body.client_id);
    app.stores.invalidateRegistry();

    expect(await app.stores.clients.findClient(body.client_id)).toBeNull();
    await expect(admin.delete('web')).rejects.toBeInstanceOf(RegisteredClientNotFoundError);
  });
});

describe("a registered client's jwks_uri", () => {
  it('is fetched under the SSRF guards: a host resolving to a private address is never contacted', async () => {
    const body = await registered({
      ...PUBLIC_AGENT,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://keys.agent.example.test/jwks.json',
    });
    const client = await app.stores.clients.findClient(body.client_id);
    const keys = createClientKeySource({ resolve: async () => [{ address: '10.9.8.7', family: 4 }] });

    expect(client?.dynamicallyRegistered).toBe(true);
    const getKey = keys.keysFor(client!);
    await expect(getKey({ alg: 'ES256', kid: 'k' }, { payload: '', signature: '' } as never)).rejects.toThrow(
      /no public address/,
    );
  });
});
