import { randomBytes } from 'node:crypto';
import type { DatabaseLocation } from '@oidc-orders/service-kit';
import { acquirePglite } from '@oidc-orders/service-kit/testing';
import pg from 'pg';
import { type DatabaseHandle, openDatabase, pgliteDatabase } from '../../src/db/client.js';
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

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    const location: DatabaseLocation = { driver: 'pglite', dataDir: undefined };
    const lent = await acquirePglite(PGLITE_TEMPLATE);
    const handle = pgliteDatabase(lent.client);
    await handle.migrate();
    return {
      handle,
      location,
      openAnother: () => Promise.reject(new Error('an in-memory PGlite database cannot be shared')),
      // The handle stops working (as a closed database) and the instance goes back to the pool.
      drop: () => lent.release(),
    };
  }

  const name = `auth_t_${randomBytes(6).toString('hex')}`;
  await withAdminClient((client) => client.query(`create database ${name}`));
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  const location: DatabaseLocation = { driver: 'pg', connectionString: url.toString() };
  const handle = await openDatabase(location);
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
      await withAdminClient((client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
