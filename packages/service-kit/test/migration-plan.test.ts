import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contractionReason,
  openDatabase,
  planMigrations,
  readCommittedMigrations,
  runMigrateCommand,
} from '../src/index.js';
import { describePlan } from '../src/migrate-command.js';
import { writeMigrationFolder } from './migration-folder.js';

const CREATE = 'CREATE TABLE "things" (\n\t"id" text PRIMARY KEY NOT NULL,\n\t"name" text NOT NULL\n);';

describe('contractionReason', () => {
  it.each([
    CREATE,
    'ALTER TABLE "things" ADD COLUMN "note" text;',
    'ALTER TABLE "things" ADD COLUMN "flag" boolean DEFAULT false NOT NULL;',
    `ALTER TABLE "things" ADD COLUMN "tags" text[] DEFAULT '{}'::text[] NOT NULL;`,
    'CREATE INDEX "things_name_idx" ON "things" USING btree ("name");',
    'DROP INDEX "things_name_idx";',
  ])('expands: %s', (statement) => {
    expect(contractionReason(statement)).toBeUndefined();
  });

  it.each([
    ['DROP TABLE "things";', /drops a table/],
    ['ALTER TABLE "things" DROP COLUMN "name";', /drops a column/],
    ['ALTER TABLE "things" RENAME COLUMN "name" TO "title";', /renames/],
    ['ALTER TABLE "things" RENAME TO "items";', /renames/],
    ['ALTER TABLE "things" ALTER COLUMN "note" SET NOT NULL;', /makes a column required/],
    ['ALTER TABLE "things" ALTER COLUMN "note" SET DATA TYPE integer;', /changes a column type/],
    ['ALTER TABLE "things" ALTER COLUMN "flag" DROP DEFAULT;', /removes a default/],
    ['ALTER TABLE "things" ADD COLUMN "owner" text NOT NULL;', /required column without a default/],
    ["ALTER TYPE \"status\" RENAME VALUE 'a' TO 'b';", /renames/],
  ])('contracts: %s', (statement, reason) => {
    expect(contractionReason(statement)).toMatch(reason);
  });
});

describe('planMigrations', () => {
  const migrations = [
    { tag: '0000_init', createdAt: 1, statements: [CREATE] },
    { tag: '0001_drop', createdAt: 2, statements: ['ALTER TABLE "things" DROP COLUMN "name";'] },
  ];

  it('nothing pending: the running release stays up', () => {
    const plan = planMigrations(migrations, 2);
    expect(plan).toMatchObject({ total: 2, applied: 2, pending: [], contractions: [] });
    expect(describePlan('x', 'here', plan).at(-1)).toBe('nothing to apply: the running release can stay up');
  });

  it('an empty database has no running release: everything applies, nothing is a contraction', () => {
    const plan = planMigrations(migrations, undefined);
    expect(plan.pending.map(({ tag }) => tag)).toEqual(['0000_init', '0001_drop']);
    expect(plan.contractions).toEqual([]);
    expect(describePlan('x', 'here', plan).at(-1)).toMatch(/^empty database: /);
  });

  it('only migrations newer than the last applied one are pending, as drizzle applies them', () => {
    const plan = planMigrations(migrations, 1);
    expect(plan.pending.map(({ tag }) => tag)).toEqual(['0001_drop']);
    expect(plan.contractions).toEqual([
      {
        migration: '0001_drop',
        statement: migrations[1]!.statements[0],
        reason: expect.stringMatching(/drops a column/),
      },
    ]);
  });
});

describe('every committed migration', () => {
  // Both apps' drizzle-kit folders: a migration that contracts must not be committed, since the
  // previous release runs on the migrated database during a rolling upgrade (docs/upgrades.md).
  // There is no historical exception.
  it.each(['auth-server', 'orders'])('of %s only expands the schema', async (app) => {
    const migrations = await readCommittedMigrations(
      join(import.meta.dirname, '../../../apps', app, 'drizzle'),
    );
    expect(migrations.length).toBeGreaterThan(2);
    const plan = planMigrations(migrations, 0);
    expect(plan.pending).toHaveLength(migrations.length);
    expect(plan.contractions).toEqual([]);
  });
});

describe('migrate plan / check against a database', () => {
  // One database on which the running release applied 0000_init; each test then commits what the
  // next release would add and runs the command.
  let folder: string;
  let definition: { schema: Record<string, never>; migrationsFolder: string; migrationLockKey: number };
  const INIT: [string, string] = ['0000_init', CREATE];

  /** A drizzle-kit folder holding `migrations` (tag → SQL) in order. */
  const writeMigrations = (migrations: Array<[string, string]>) =>
    writeMigrationFolder(join(folder, 'drizzle'), migrations);

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'migrate-plan-'));
    definition = { schema: {}, migrationsFolder: join(folder, 'drizzle'), migrationLockKey: 1 };
    await writeMigrations([INIT]);
    const running = await openDatabase({ driver: 'pglite', dataDir: join(folder, 'db') }, definition);
    await running.migrate();
    await running.close();
    // Starting PGlite on a data directory can take seconds on a busy machine.
  }, 60_000);
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  async function deploy(next: Array<[string, string]>, command: string) {
    await writeMigrations([INIT, ...next]);
    const lines: string[] = [];
    const write = (line: string) => lines.push(line);
    const databaseUrl = `pglite://${join(folder, 'db')}`;
    const code = await runMigrateCommand([command], { app: 'test-app', definition, databaseUrl, write });
    return { code, lines };
  }

  it('a pending additive migration is safe: check exits 0', async () => {
    const { code, lines } = await deploy(
      [['0001_note', 'ALTER TABLE "things" ADD COLUMN "note" text;']],
      'check',
    );
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/2 migrations in this release, 1 applied, 1 pending$/);
    expect(lines).toContain('  0001_note (1 statements): expand');
    expect(lines.at(-1)).toMatch(/^safe: /);
  });

  it('a pending drop is not safe: check exits 1 with one NOT SAFE line, plan exits 0', async () => {
    const drop: Array<[string, string]> = [['0001_drop_name', 'ALTER TABLE "things" DROP COLUMN "name";']];
    const check = await deploy(drop, 'check');
    expect(check.code).toBe(1);
    expect(check.lines).toContain('  0001_drop_name (1 statements): CONTRACT');
    expect(check.lines.at(-1)).toMatch(/^NOT SAFE: 1 contracting statement/);
    const plan = await deploy(drop, 'plan');
    expect(plan.code).toBe(0);
    expect(plan.lines.at(-1)).toMatch(/^NOT SAFE: /);
  });

  it('without DATABASE_URL or a command it explains itself', async () => {
    const lines: string[] = [];
    const options = {
      app: 'x',
      definition: { schema: {}, migrationsFolder: folder, migrationLockKey: 1 },
      write: (line: string) => lines.push(line),
    };
    expect(await runMigrateCommand(['check'], { ...options, databaseUrl: undefined })).toBe(2);
    expect(await runMigrateCommand(['apply'], { ...options, databaseUrl: 'pglite://memory' })).toBe(2);
    expect(lines[0]).toMatch(/^DATABASE_URL must be set/);
    expect(lines[1]).toMatch(/^usage: migrate/);
  });
});
