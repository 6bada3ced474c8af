import { join } from 'node:path';
import { type CommandResult, runNodeScript } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSeedDocument } from '../src/seed.js';
import { startTestApp, TEST_ISSUER, TEST_KEY_ENCRYPTION_KEY, type TestApp } from './helpers/app.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';
import { testSeed } from './helpers/seed.js';

/**
 * The `clients` command as an operator runs it: a separate process on the database of a running
 * server (a fresh PostgreSQL database; PGlite cannot be shared between processes). The same
 * functions in-process are in client-registration.test.ts; this covers the process itself.
 */
const postgres = await postgresForThisFile('test/clients-cli.test.ts');
const INITIAL_ACCESS_TOKEN = 'initial-access-token-for-cli-tests-01';
let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;

beforeAll(async () => {
  if (!postgres) return;
  database = await createPostgresTestDatabase();
  ({ app, close } = await startTestApp({
    database,
    seed: {
      ...testSeed(),
      client_registration: { initial_access_tokens: [INITIAL_ACCESS_TOKEN], scope: 'openid profile' },
    },
  }));
});
afterAll(async () => {
  await close?.();
  await database?.drop();
});

function clients(args: string[]): Promise<CommandResult> {
  if (database.location.driver !== 'pg') throw new Error('the CLI needs a shared database');
  return runNodeScript(join(import.meta.dirname, '..'), 'src/cli/clients.ts', args, {
    NODE_ENV: 'production',
    DATABASE_URL: database.location.connectionString,
    ISSUER: TEST_ISSUER,
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
  });
}

async function registerClient(): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/register',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${INITIAL_ACCESS_TOKEN}` },
    payload: JSON.stringify({ client_name: 'CLI agent', redirect_uris: ['https://agent.example.test/cb'] }),
  });
  expect(response.statusCode).toBe(201);
  return response.json().client_id;
}

describe.runIf(postgres)('clients CLI, a separate process on the running server’s database', () => {
  it('list names registered clients; export prints a seed entry the seed file accepts', async () => {
    const clientId = await registerClient();

    const listed = await clients(['list']);
    const exported = await clients(['export', clientId]);

    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${clientId}\tname=CLI agent`);
    expect(listed.stdout).not.toMatch(/^web\t/m);
    expect(exported.code).toBe(0);
    const entry = JSON.parse(exported.stdout);
    expect(entry).toMatchObject({
      client_id: clientId,
      client_secret_hash: expect.stringMatching(/^hmac-sha256\$/),
    });
    expect(() => parseSeedDocument({ clients: [entry] })).not.toThrow();
  });

  it('delete removes a registered client (exit 0, an audit line) and refuses a seed client (exit 1)', async () => {
    const clientId = await registerClient();

    const deleted = await clients(['delete', clientId]);
    const seedClient = await clients(['delete', 'web']);

    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toContain('"event":"auth.client.deleted"');
    app.stores.invalidateRegistry();
    expect(await app.stores.clients.findClient(clientId)).toBeNull();
    expect(seedClient.code).toBe(1);
    expect(seedClient.stderr).toContain('no registered client web');
  });
});
