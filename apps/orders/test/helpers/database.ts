import { acquirePglite, createPostgresDatabase, pgliteTemplate } from '@oidc-orders/service-kit/testing';
import { count, sql } from 'drizzle-orm';
import { type DatabaseHandle, MIGRATIONS_FOLDER, openDatabase } from '../../src/db/client.js';
import { pgliteDatabase } from '../../src/db/pglite-client.js';
import { orders, sessions, users } from '../../src/db/schema.js';

/**
 * This app's migrated PGlite template (see `@oidc-orders/service-kit/testing`): global-setup.ts
 * writes it once per run; each file's in-memory database is an instance of the worker's pool
 * emptied to it, instead of a fresh initdb and every migration (seconds per file).
 */
export const PGLITE_TEMPLATE = pgliteTemplate('orders', MIGRATIONS_FOLDER, (client) =>
  pgliteDatabase(client).migrate(),
);

/**
 * One database per test file, so files run in parallel without seeing each other's rows:
 * - default: an in-memory PGlite from the worker's pool (PGLITE_TEMPLATE); a child process given
 *   `url` (`pglite://memory`) opens its own;
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

  if (!adminUrl) return pooledPgliteDatabase(queries, logger);

  const database = await createPostgresDatabase('orders_t', adminUrl);
  const url = database.url;
  const handle = await openDatabase(url, { connectTimeoutMs: 10_000, logger });
  await handle.migrate();
  return testDatabase(url, handle, queries, async () => {
    await handle.close();
    await database.drop();
  });
}

async function pooledPgliteDatabase(
  queries: string[],
  logger: { logQuery(query: string): void },
): Promise<TestDatabase> {
  const lent = await acquirePglite(PGLITE_TEMPLATE);
  const handle = pgliteDatabase(lent.client, { logger });
  await handle.migrate();
  // The handle stops working (as a closed database) and the instance goes back to the pool.
  return testDatabase('pglite://memory', handle, queries, () => lent.release());
}

function testDatabase(
  url: string,
  handle: DatabaseHandle,
  queries: string[],
  dispose: () => Promise<void>,
): TestDatabase {
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
    dispose,
  };
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
