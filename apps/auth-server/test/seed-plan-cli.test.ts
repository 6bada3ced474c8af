import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CommandResult, runNodeScript } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { applySeed } from '../src/seed.js';
import { seedPlanContext } from '../src/seed-plan/plan-seed.js';
import { TEST_ISSUER, TEST_KEY_ENCRYPTION_KEY, testConfig } from './helpers/app.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';
import { TEST_PASSWORD_COST, testSeed } from './helpers/seed.js';

/**
 * `pnpm --filter auth-server seed plan [file]` as CI runs it on a pull request: a separate process
 * on the database the seed was applied to (PostgreSQL: PGlite cannot be shared between processes).
 * Exit 0 when nothing would change, 2 when something would, 1 on an error.
 */
const postgres = await postgresForThisFile('test/seed-plan-cli.test.ts');
let database: TestDatabase;
let folder: string;

beforeAll(async () => {
  if (!postgres) return;
  database = await createPostgresTestDatabase();
  await applySeed(database.handle.db, testSeed(), {
    ...seedPlanContext(testConfig()),
    now: 1_800_000_000,
    passwordCost: TEST_PASSWORD_COST,
  });
  folder = await mkdtemp(join(tmpdir(), 'seed-plan-'));
});
afterAll(async () => {
  await database?.drop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function seedFile(name: string, content: SeedDocument | string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function seedPlan(args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  if (database.location.driver !== 'pg') throw new Error('the CLI needs a shared database');
  return runNodeScript(join(import.meta.dirname, '..'), 'src/cli/seed.ts', ['plan', ...args], {
    NODE_ENV: 'production',
    DATABASE_URL: database.location.connectionString,
    ISSUER: TEST_ISSUER,
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    ...env,
  });
}

function changedSeed(): SeedDocument {
  const seed = testSeed();
  return {
    ...seed,
    clients: (seed.clients ?? []).filter((client) => client.client_id !== 'service'),
    users: [
      ...(seed.users ?? []),
      { sub: 'u-frank', username: 'frank', password: 'frank-password-for-tests' },
    ],
  };
}

describe.runIf(postgres)('seed plan CLI', () => {
  it('exits 0 and says so when the file is what the database holds (SEED_FILE by default)', async () => {
    const path = await seedFile('same.json', testSeed());
    const result = await seedPlan([], { SEED_FILE: path });
    expect(result.stdout).toContain('no changes');
    expect(result.code).toBe(0);
  });

  it('exits 2 and lists each change of a changed file, as text and as JSON', async () => {
    const path = await seedFile('changed.json', changedSeed());
    const text = await seedPlan([path]);
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(/^clients:\n {2}- service {2}disabled/m);
    expect(text.stdout).toMatch(/^users:\n {2}\+ u-frank {2}added/m);

    const json = await seedPlan([path, '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).changes).toEqual([
      { kind: 'clients', id: 'service', action: 'disable', members: [] },
      { kind: 'users', id: 'u-frank', action: 'add', members: [] },
    ]);
  });

  it('exits 1 for a file that is not a valid seed, naming the problem', async () => {
    const path = await seedFile('broken.json', '{ "clients": [ { "client_id": 1 } ] }');
    const result = await seedPlan([path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('clients[0].client_id');
    expect((await seedPlan([join(folder, 'missing.json')])).code).toBe(1);
  });
});
