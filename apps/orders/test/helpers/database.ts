import { randomBytes } from 'node:crypto';
import { count, sql } from 'drizzle-orm';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { orders, sessions, users } from '../../src/db/schema.js';

/**
 * One database per test file, so files run in parallel without seeing each other's rows:
 * - default: an in-memory PGlite (`pglite://memory`);
 * - with TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test): a fresh
 *   `orders_t_<random>` database created through that connection and dropped in dispose().
 */
export interface TestDatabase {
  readonly driver: 'pg' | 'pglite';
  /** DATABASE_URL for a child process: the fresh PostgreSQL database, or its own pglite://memory. */
  readonly url: string;
  /** Opened and migrated, with a query log the tests read to count statements. */
  readonly handle: DatabaseHandle;
  /** SQL text of every statement sent through `handle` (Drizzle's logger). */
  readonly queries: string[];
  /** Empties every table and restarts the ids; call in beforeEach. */
  reset(): Promise<void>;
  dispose(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const queries: string[] = [];
  const logger = { logQuery: (query: string) => void queries.push(query) };
  const adminUrl = process.env.TEST_DATABASE_URL;

  let url = 'pglite://memory';
  let dropDatabase = async () => {};
  if (adminUrl) {
    const name = `orders_t_${randomBytes(6).toString('hex')}`;
    await runAdminStatement(adminUrl, `create database ${name}`);
    const databaseUrl = new URL(adminUrl);
    databaseUrl.pathname = `/${name}`;
    url = databaseUrl.toString();
    // FORCE (PostgreSQL 13+) also ends connections a crashed child process may have left behind.
    dropDatabase = () => runAdminStatement(adminUrl, `drop database if exists ${name} with (force)`);
  }

  const handle = await openDatabase(url, { connectTimeoutMs: 10_000, logger });
  await handle.migrate();
  return {
    driver: handle.driver,
    url,
    handle,
    queries,
    async reset() {
      await handle.db.execute(
        sql`truncate table orders, users, sessions, dpop_proof_jtis restart identity cascade`,
      );
      queries.length = 0;
    },
    async dispose() {
      await handle.close();
      await dropDatabase();
    },
  };
}

async function runAdminStatement(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function countRows(
  database: TestDatabase,
  table: 'users' | 'orders' | 'sessions',
): Promise<number> {
  const [row] = await database.handle.db
    .select({ rows: count() })
    .from(table === 'users' ? users : table === 'orders' ? orders : sessions);
  return row!.rows;
}
