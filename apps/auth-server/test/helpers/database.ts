import type { DatabaseLocation, OpenDatabaseOptions } from '@oidc-orders/service-kit';
import {
  acquirePglite,
  createPostgresDatabase,
  postgresForThisFile as postgresReachableForFile,
} from '@oidc-orders/service-kit/testing';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { pgliteDatabase } from '../../src/db/pglite-client.js';
import { PGLITE_TEMPLATE } from './pglite-template.js';

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default (from the worker's pool,
 * emptied to the migrated template's state, see `@oidc-orders/service-kit/testing`), or, when
 * TEST_DATABASE_URL names a PostgreSQL server, a new database `auth_t_<random>` on it that
 * `drop()` removes again.
 */
export interface TestDatabase {
  handle: DatabaseHandle;
  location: DatabaseLocation;
  /** Opens another handle on the same database (a second "instance"); PostgreSQL only. */
  openAnother(): Promise<DatabaseHandle>;
  drop(): Promise<void>;
}

export const testDatabaseUrl = process.env.TEST_DATABASE_URL;
export const databaseKind = testDatabaseUrl ? 'postgres' : 'pglite';
/**
 * The PostgreSQL server of tests that need one whatever TEST_DATABASE_URL says (another process on
 * the same database): TEST_DATABASE_URL's, else the local one that CI starts.
 */
export const postgresAdminUrl = testDatabaseUrl ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Whether a file that needs PostgreSQL runs here (the test kit's check, on postgresAdminUrl). */
export const postgresForThisFile = (file: string): Promise<boolean> =>
  postgresReachableForFile(file, postgresAdminUrl);

/** `logger`: Drizzle's query logger on the handle (a test that counts a flow's statements). */
export async function createTestDatabase(
  options: Pick<OpenDatabaseOptions, 'logger'> = {},
): Promise<TestDatabase> {
  if (testDatabaseUrl) return createPostgresTestDatabase(testDatabaseUrl, options);
  const location: DatabaseLocation = { driver: 'pglite', dataDir: undefined };
  const lent = await acquirePglite(PGLITE_TEMPLATE);
  const handle = pgliteDatabase(lent.client, options);
  await handle.migrate();
  return {
    handle,
    location,
    openAnother: () => Promise.reject(new Error('an in-memory PGlite database cannot be shared')),
    // The handle stops working (as a closed database) and the instance goes back to the pool.
    drop: () => lent.release(),
  };
}

/** A fresh, migrated PostgreSQL database `auth_t_<random>` on the server of `adminUrl`. */
export async function createPostgresTestDatabase(
  adminUrl = postgresAdminUrl,
  options: Pick<OpenDatabaseOptions, 'logger'> = {},
): Promise<TestDatabase> {
  const database = await createPostgresDatabase('auth_t', adminUrl);
  const location: DatabaseLocation = { driver: 'pg', connectionString: database.url };
  const handle = await openDatabase(location, options);
  await handle.migrate();
  const others: DatabaseHandle[] = [];
  return {
    handle,
    location,
    async openAnother() {
      const other = await openDatabase(location);
      others.push(other);
      return other;
    },
    async drop() {
      await Promise.all([handle, ...others].map((open) => open.close().catch(() => {})));
      await database.drop();
    },
  };
}
