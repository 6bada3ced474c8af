import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLIENT_AUTHENTICATION_METHOD_NAMES,
  createSecretHasher,
  FORBIDDEN_GRANT_TYPES,
  verifyPassword,
} from '@oidc-orders/oauth-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clients, resources, users } from '../src/db/schema.js';
import { deriveSecretHashingKey } from '../src/keys/key-encryption.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { parseSeedDocument, readSeedFile, SeedError } from '../src/seed.js';
import { startTestApp, type TestApp, testConfig } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { ORDERS_API, TEST_SECRETS, testSeed } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

function seedError(document: unknown): string {
  try {
    parseSeedDocument(document);
  } catch (error) {
    expect(error).toBeInstanceOf(SeedError);
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  }
  throw new Error('expected a SeedError');
}

describe('seed validation', () => {
  it('accepts the contract example', () => {
    expect(() =>
      parseSeedDocument({
        clients: [
          {
            client_id: 'orders-web',
            client_secret: 'dev-only-secret',
            redirect_uris: ['http://localhost:3000/signin-oidc'],
            post_logout_redirect_uris: ['http://localhost:3000/'],
            grant_types: ['authorization_code', 'refresh_token'],
            scope: 'openid profile email offline_access orders.read',
            skip_consent: true,
            backchannel_logout_uri: 'http://localhost:3000/backchannel-logout',
            allowed_cors_origins: [],
          },
        ],
        resources: [
          {
            id: 'orders-api',
            scopes: ['orders.read', 'orders.write'],
            access_token_format: 'jwt',
            access_token_ttl: 300,
            secret: 'dev-only-resource-secret',
            claims: ['email'],
          },
        ],
        users: [
          {
            sub: 'u-alice',
            username: 'alice',
            password: 'alice-pass',
            name: 'Alice Example',
            email: 'alice@example.com',
          },
        ],
      }),
    ).not.toThrow();
  });

  it.each(['password', 'implicit'])('rejects a client asking for the %s grant', (grantType) => {
    const message = seedError({
      clients: [
        {
          client_id: 'legacy',
          client_secret: 's',
          redirect_uris: ['https://x/cb'],
          grant_types: [grantType],
        },
      ],
    });
    expect(message).toContain(`grant type "${grantType}" is refused`);
    expect(message).toContain('legacy');
  });

  it.each(Object.entries(FORBIDDEN_GRANT_TYPES))(
    "refuses %s with oauth-core's reason",
    (grantType, reason) => {
      const client = { client_id: 'legacy', client_secret: 's', grant_types: [grantType] };
      expect(seedError({ clients: [client] })).toBe(
        `clients[0] (legacy): grant type "${grantType}" is refused: ${reason}`,
      );
    },
  );

  it.each(CLIENT_AUTHENTICATION_METHOD_NAMES)(
    'accepts token_endpoint_auth_method %s, as oauth-core lists it',
    (method) => {
      const credentials =
        method === 'private_key_jwt'
          ? { jwks_uri: 'https://rp.example/jwks' }
          : method === 'none'
            ? {}
            : { client_secret: 's' };
      const client = { client_id: 'c', redirect_uris: ['https://x/cb'], token_endpoint_auth_method: method };
      expect(() => parseSeedDocument({ clients: [{ ...client, ...credentials }] })).not.toThrow();
    },
  );

  it('rejects unknown members, naming them', () => {
    expect(
      seedError({ clients: [{ client_id: 'c', grant_types: ['client_credentials'], colour: 'red' }] }),
    ).toBe('clients[0].colour: unknown member "colour"');
    expect(seedError({ resources: [{ id: 'r', scopes: [], tokenFormat: 'jwt' }] })).toBe(
      'resources[0].tokenFormat: unknown member "tokenFormat"',
    );
    expect(seedError({ users: [{ sub: 's', username: 'u', password: 'p', role: 'admin' }] })).toBe(
      'users[0].role: unknown member "role"',
    );
    expect(seedError({ client: [] })).toBe('client: unknown member "client"');
  });

  it.each([
    [{ clients: [{ client_id: 'c', grant_types: ['authorization_code'] }] }, /redirect_uris is required/],
    [
      { clients: [{ client_id: 'c', grant_types: ['client_credentials'] }] },
      /client_credentials requires a client that authenticates/,
    ],
    [
      { clients: [{ client_id: 'c', redirect_uris: ['https://x/cb#frag'] }] },
      /not an absolute URI without a fragment/,
    ],
    [
      {
        clients: [
          {
            client_id: 'c',
            client_secret: 'a',
            client_secret_hash: `hmac-sha256$${'a'.repeat(43)}`,
            grant_types: ['client_credentials'],
          },
        ],
      },
      /not both/,
    ],
    [
      { clients: [{ client_id: 'c', grant_types: ['urn:example:custom'] }] },
      /^clients\[0\]\.grant_types\[0\]/,
    ],
    [
      {
        clients: [
          { client_id: 'c', redirect_uris: ['https://x/cb'], allowed_cors_origins: ['https://x/path'] },
        ],
      },
      /not an origin/,
    ],
    [
      { resources: [{ id: 'r', scopes: ['a'], access_token_format: 'paseto' }] },
      /^resources\[0\]\.access_token_format/,
    ],
    [
      {
        resources: [
          { id: 'a', scopes: ['s'] },
          { id: 'b', scopes: ['s'] },
        ],
      },
      /scope "s" already belongs to resource a/,
    ],
    [{ users: [{ sub: 's', username: 'u' }] }, /exactly one of password or password_hash/],
    [
      {
        users: [
          { sub: 's', username: 'u', password: 'p' },
          { sub: 's', username: 'v', password: 'p' },
        ],
      },
      /duplicate sub/,
    ],
    [
      { clients: [{ grant_types: ['client_credentials'] }] },
      /^clients\[0\]\.client_id: required member is missing$/,
    ],
  ])('rejects invalid entry %#', (document, message) => {
    expect(seedError(document)).toMatch(message);
  });

  it('reports a file that is not JSON with its path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'auth-seed-'));
    const file = join(dir, 'seed.json');
    await writeFile(file, '{ "clients": [');
    await expect(readSeedFile(file)).rejects.toThrow(
      new RegExp(`^SEED_FILE ${file}(:\\d+:\\d+)? is not valid JSON`),
    );
    await writeFile(file, JSON.stringify({ users: [{ sub: 's', username: 'u', password: 'p', extra: 1 }] }));
    await expect(readSeedFile(file)).rejects.toThrow(
      `SEED_FILE ${file}: users[0].extra: unknown member "extra"`,
    );
  });
});

describe('seed loading', () => {
  it('stores only hashes of secrets and passwords', async () => {
    const clientRows = await app.database.db.select().from(clients);
    const service = clientRows.find((row) => row.clientId === 'service');
    expect(service?.secretHash).toMatch(/^hmac-sha256\$/);
    expect(JSON.stringify(clientRows)).not.toContain(TEST_SECRETS.service);
    expect(JSON.stringify(clientRows)).not.toContain(TEST_SECRETS.web);
    // The hash is keyed with a key derived from KEY_ENCRYPTION_KEY.
    const hasher = createSecretHasher(deriveSecretHashingKey(testConfig().keyEncryptionKey));
    expect(hasher.verify(TEST_SECRETS.service, service?.secretHash ?? '')).toBe(true);
    expect(clientRows.find((row) => row.clientId === 'spa')?.secretHash).toBeNull();

    const resourceRows = await app.database.db.select().from(resources);
    expect(resourceRows.find((row) => row.id === ORDERS_API)?.secretHash).toMatch(/^hmac-sha256\$/);
    expect(JSON.stringify(resourceRows)).not.toContain(TEST_SECRETS.ordersApi);

    const [alice] = await app.database.db.select().from(users);
    expect(alice?.passwordHash).toMatch(/^scrypt\$/);
    expect(await verifyPassword(TEST_SECRETS.alicePassword, alice?.passwordHash ?? '')).toBe(true);
  });

  it('applies defaults for omitted members', async () => {
    const spa = await app.stores.clients.findClient('spa');
    expect(spa).toMatchObject({
      clientName: 'spa',
      secretHash: null,
      idTokenSigningAlg: 'RS256',
      postLogoutRedirectUris: [],
      backchannelLogoutUri: null,
      refreshTokenAbsoluteTtl: testConfig().lifetimes.refreshTokenAbsoluteTtl,
    });
    const reports = (await app.stores.resources.listResources()).find(
      (resource) => resource.accessTokenFormat === 'opaque',
    );
    expect(reports).toMatchObject({ accessTokenTtl: 300, accessTokenSigningAlg: 'ES256', claims: [] });
  });

  it('is idempotent: applying the same seed twice leaves the same rows', async () => {
    const snapshot = async () => ({
      clients: await app.database.db.select().from(clients).orderBy(clients.clientId),
      resources: await app.database.db.select().from(resources).orderBy(resources.id),
      users: await app.database.db.select().from(users).orderBy(users.sub),
    });
    const before = await snapshot();
    await app.reseed(testSeed());
    await app.reseed(testSeed());
    const after = await snapshot();
    const withoutTimes = (rows: Array<Record<string, unknown>>) =>
      rows.map(({ updatedAt: _, ...row }) => row);
    expect(withoutTimes(after.clients)).toEqual(withoutTimes(before.clients));
    expect(withoutTimes(after.resources)).toEqual(withoutTimes(before.resources));
    // The stored scrypt hash is kept while it still matches the plain-text password.
    expect(withoutTimes(after.users)).toEqual(withoutTimes(before.users));
  });

  it('updates changed entries and refreshes the in-memory registry', async () => {
    const changed: SeedDocument = testSeed();
    const service = changed.clients?.find((client) => client.client_id === 'service');
    if (service) service.client_name = 'Renamed service';
    expect((await app.stores.clients.findClient('service'))?.clientName).toBe('service');
    await app.reseed(changed);
    expect((await app.stores.clients.findClient('service'))?.clientName).toBe('Renamed service');
  });

  it('accepts already hashed secrets as they are', async () => {
    const hash = `hmac-sha256$${'Q'.repeat(43)}`;
    const passwordHash = 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2g';
    await app.reseed({
      clients: [{ client_id: 'prehashed', client_secret_hash: hash, grant_types: ['client_credentials'] }],
      users: [{ sub: 'u-bob', username: 'bob', password_hash: passwordHash }],
    });
    expect((await app.stores.clients.findClient('prehashed'))?.secretHash).toBe(hash);
    expect((await app.stores.users.findUserByUsername('bob'))?.passwordHash).toBe(passwordHash);
  });

  it.each([
    ['the production one by default', 'production', 'scrypt$32768$8$1'],
    ['the one given', { N: 2 ** 11, r: 4, p: 2 }, 'scrypt$2048$4$2'],
  ] as const)('hashes plain-text passwords at a scrypt cost: %s', async (_, seedPasswordCost, prefix) => {
    const started = await startTestApp({
      seed: { users: [{ sub: 'u-carol', username: 'carol', password: 'carol-password' }] },
      seedPasswordCost,
    });
    try {
      const carol = await started.app.stores.users.findUserBySub('u-carol');
      expect(carol?.passwordHash.split('$').slice(0, 4).join('$')).toBe(prefix);
      expect(await verifyPassword('carol-password', carol?.passwordHash ?? '')).toBe(true);
    } finally {
      await started.close();
    }
  });

  it('fails the start when the seed is invalid', async () => {
    const database = await createTestDatabase();
    try {
      await expect(
        startTestApp({
          database,
          seed: {
            clients: [{ client_id: 'x', client_secret: 'y', grant_types: ['implicit'] }],
          } as unknown as SeedDocument,
        }),
      ).rejects.toThrow(/grant type "implicit" is refused/);
    } finally {
      await database.drop();
    }
  });
});
