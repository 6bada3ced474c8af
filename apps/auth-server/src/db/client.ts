import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { DatabaseLocation } from './database-url.js';
import * as schema from './schema.js';

/**
 * One Drizzle code path for both drivers: everything outside this file is typed on `PgDatabase`,
 * which node-postgres, PGlite and a transaction (`PgTransaction extends PgDatabase`) all satisfy.
 */
export type AppDatabase = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: AppDatabase;
  driver: DatabaseLocation['driver'];
  /** Applies the committed migrations in ../../drizzle. Safe when several instances start together. */
  migrate(): Promise<void>;
  /** Resolves when `select 1` answers within `timeoutMs`, rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));
/** Any constant works; it only has to be the same in every instance (pg_advisory_lock key). */
const MIGRATION_LOCK_KEY = 4_000_001;

export interface OpenDatabaseOptions {
  /** Called for errors on idle pooled connections (e.g. the server restarted), which would otherwise crash. */
  onIdleConnectionError?: (error: Error) => void;
}

export async function openDatabase(
  location: DatabaseLocation,
  options: OpenDatabaseOptions = {},
): Promise<DatabaseHandle> {
  return location.driver === 'pg'
    ? openNodePostgres(location.connectionString, options)
    : openPglite(location.dataDir);
}

async function openNodePostgres(
  connectionString: string,
  options: OpenDatabaseOptions,
): Promise<DatabaseHandle> {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // Fail fast while the database is down, so requests get 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', (error) => options.onIdleConnectionError?.(error));
  // pg-pool listens for errors of idle clients only. A client checked out (a transaction between
  // two statements) whose connection dies (database restart) would emit an unhandled 'error' and
  // crash the process; the statement in progress, or the next one, fails anyway and becomes a 503.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzleNodePg({ client: pool, schema });
  return {
    db,
    driver: 'pg',
    async migrate() {
      // drizzle's migrator takes no lock; two instances starting together would both try to
      // create the tables. A session advisory lock on one dedicated connection serialises them.
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        try {
          await migrateNodePg(drizzleNodePg({ client, schema }), { migrationsFolder: MIGRATIONS_FOLDER });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
        }
      } finally {
        client.release();
      }
    },
    ping: (timeoutMs) => withTimeout(db.execute(sql`select 1`), timeoutMs),
    close: async () => {
      if (!pool.ended) await pool.end();
    },
  };
}

async function openPglite(dataDir: string | undefined): Promise<DatabaseHandle> {
  if (dataDir === undefined) return pgliteDatabase(await PGlite.create());
  // PGlite creates its own folder but not the parents (`.data/` on a first start).
  await mkdir(dirname(dataDir), { recursive: true });
  return pgliteDatabase(await PGlite.create(dataDir));
}

/** A handle on an already created PGlite instance (tests start theirs from a migrated template). */
export function pgliteDatabase(client: PGlite): DatabaseHandle {
  const db = drizzlePglite({ client, schema });
  return {
    db,
    driver: 'pglite',
    // One process owns a PGlite data directory, so there is nobody to race with.
    migrate: () => migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER }),
    ping: (timeoutMs) => withTimeout(db.execute(sql`select 1`), timeoutMs),
    // Idempotent: closing twice (app shutdown, then a test's cleanup) is not an error.
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}

async function withTimeout(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
