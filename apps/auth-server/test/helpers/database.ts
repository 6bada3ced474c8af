import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { DatabaseLocation } from '@oidc-orders/service-kit';
import pg from 'pg';
import { type DatabaseHandle, openDatabase, pgliteDatabase } from '../../src/db/client.js';
import { pgliteTemplatePath } from './pglite-template.js';

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or, when
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
    const handle = await openPgliteFromTemplate();
    await handle.migrate();
    return {
      handle,
      location,
      openAnother: () => Promise.reject(new Error('an in-memory PGlite database cannot be shared')),
      drop: () => handle.close(),
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

async function openPgliteFromTemplate(): Promise<DatabaseHandle> {
  const template = pgliteTemplatePath();
  if (!existsSync(template)) return openDatabase({ driver: 'pglite', dataDir: undefined });
  const client = await PGlite.create({ loadDataDir: new Blob([await readFile(template)]) });
  return pgliteDatabase(client);
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
