import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../src/index.js';
import { isLockConflict, retryWhileGivingWay } from '../src/migration-locks.js';
import { createPostgresDatabase, postgresForThisFile } from '../src/testing/index.js';
import { writeMigrationFolder } from './migration-folder.js';

/**
 * A migration applied while instances of the previous release still serve (a rolling upgrade),
 * against the real local PostgreSQL: the migration holds one table and waits for a second, a
 * request holds the second and waits for the first. The migration gives way (lock_timeout, well
 * under deadlock_timeout), the request goes through, and the migration is applied on a later try.
 */

const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const runs = await postgresForThisFile('migration-locks.test.ts', adminUrl);

const INIT =
  'create table first_table (id int);\n--> statement-breakpoint\ncreate table second_table (id int);';
// The pause lets the request start waiting for `second_table` before the migration asks for
// `first_table`: without the migration's lock_timeout, PostgreSQL's deadlock check then aborts
// the request, which waited first.
const NEXT = [
  'alter table second_table add column added_second int;',
  'select pg_sleep(0.4);',
  'alter table first_table add column added_first int;',
].join('\n--> statement-breakpoint\n');

describe('isLockConflict and retryWhileGivingWay', () => {
  it('recognise a lock timeout and a deadlock, also wrapped by Drizzle, and nothing else', () => {
    expect(isLockConflict(Object.assign(new Error('x'), { code: '55P03' }))).toBe(true);
    expect(
      isLockConflict(new Error('Failed query', { cause: Object.assign(new Error('d'), { code: '40P01' }) })),
    ).toBe(true);
    expect(isLockConflict(Object.assign(new Error('x'), { code: '42P01' }))).toBe(false);
    expect(isLockConflict('55P03')).toBe(false);
  });

  it('try again only after giving way, and say so when it never stops', async () => {
    let calls = 0;
    await retryWhileGivingWay(async () => {
      calls += 1;
      if (calls < 3) throw Object.assign(new Error('timeout'), { code: '55P03' });
    });
    expect(calls).toBe(3);
    let other = 0;
    const failing = retryWhileGivingWay(async () => {
      other += 1;
      throw Object.assign(new Error('no such table'), { code: '42P01' });
    });
    await expect(failing).rejects.toThrow('no such table');
    expect(other).toBe(1);
    const stuck = retryWhileGivingWay(async () => {
      throw Object.assign(new Error('timeout'), { code: '55P03' });
    }, 2);
    await expect(stuck).rejects.toThrow(/could not take their table locks in 2 attempts/);
  });
});

describe.runIf(runs)('a migration beside the requests of a running release', () => {
  let folder: string;
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let handle: DatabaseHandle<Record<string, never>>;
  let request: pg.Client;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'migration-locks-'));
    database = await createPostgresDatabase('migration_locks', adminUrl);
    await writeMigrationFolder(folder, [['0000_init', INIT]]);
    const definition = { schema: {}, migrationsFolder: folder, migrationLockKey: 7 };
    handle = await openDatabase({ driver: 'pg', connectionString: database.url }, definition);
    await handle.migrate();
    request = new pg.Client({ connectionString: database.url });
    await request.connect();
  }, 60_000);
  afterAll(async () => {
    await request?.end();
    await handle?.close();
    await database?.drop();
    await rm(folder, { recursive: true, force: true });
  });

  it('gives way to a request that reads both tables it alters, then applies on a later attempt', async () => {
    await writeMigrationFolder(folder, [
      ['0000_init', INIT],
      ['0001_next', NEXT],
    ]);
    await request.query('begin');
    await request.query('select * from first_table');
    const migrating = handle.migrate();
    // Wait until the migration holds `second_table`, then ask for it as a join would.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await expect
        .poll(
          async () =>
            (
              await holder.query(
                `select 1 from pg_locks where relation = 'second_table'::regclass and mode = 'AccessExclusiveLock' and granted`,
              )
            ).rowCount,
          { timeout: 10_000, interval: 20 },
        )
        .toBe(1);
    } finally {
      await holder.end();
    }
    // Without the migration's lock timeout, this request is the one the deadlock check aborts.
    await expect(request.query('select * from second_table')).resolves.toMatchObject({ rowCount: 0 });
    await request.query('commit');
    await migrating;
    const columns = await request.query(
      `select table_name, column_name from information_schema.columns where column_name like 'added_%' order by 1`,
    );
    expect(columns.rows).toEqual([
      { table_name: 'first_table', column_name: 'added_first' },
      { table_name: 'second_table', column_name: 'added_second' },
    ]);
  }, 60_000);
});
