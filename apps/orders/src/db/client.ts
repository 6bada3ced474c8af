import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { Logger } from 'drizzle-orm/logger';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { DatabaseUnavailableError } from '../errors.js';
import { parseDatabaseUrl } from './database-url.js';
import * as schema from './schema.js';

/**
 * The one type every repository takes. Both drivers' databases and their transactions
 * (PgTransaction extends PgDatabase) are assignable to it, so there is a single Drizzle code path
 * above the driver.
 */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  readonly db: Database;
  readonly driver: 'pg' | 'pglite';
  /** Applies the committed drizzle-kit migrations in apps/orders/drizzle (same folder for both drivers). */
  migrate(): Promise<void>;
  /** `select 1` answered within `timeoutMs`, else DatabaseUnavailableError. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
  /**
   * The same database through connections on which PostgreSQL cancels any statement running longer
   * than `timeoutMs` (`statement_timeout` set when each connection starts, in a pool of its own, so
   * the main pool's statements stay unbounded). For single-statement writes with a deadline
   * (placing an order), which then need no BEGIN / SET LOCAL / COMMIT round trips. PGlite cannot
   * cancel a statement (one session, running on the event loop): there it is `db` itself.
   * The caller closes it (before the handle).
   */
  withStatementTimeout(timeoutMs: number): BoundedDatabase;
}

export interface BoundedDatabase {
  readonly db: Database;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Bounds establishing a connection (pool checkout on PostgreSQL). */
  connectTimeoutMs: number;
  /** Drizzle query logger; tests inject a counting one. */
  logger?: Logger;
  /** Errors of idle pooled connections (e.g. the server restarted); without a listener pg crashes the process. */
  onIdleConnectionError?: (error: Error) => void;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

// Arbitrary but fixed: every instance of this service takes the same advisory lock, so instances
// starting together apply migrations one after the other instead of racing on CREATE TABLE.
const MIGRATION_LOCK_KEY = 7_240_118_001;

export async function openDatabase(url: string, options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const location = parseDatabaseUrl(url);
  if (!location) throw new DatabaseUnavailableError('DATABASE_URL is not a postgres:// or pglite:// URL');
  const drizzleOptions = { schema, ...(options.logger ? { logger: options.logger } : {}) };

  if (location.driver === 'pglite') {
    // PGlite creates its own folder but not the parents (`.data/` on a first start).
    if (location.dataDir !== undefined) await mkdir(dirname(location.dataDir), { recursive: true });
    const client = await PGlite.create(location.dataDir);
    const db = drizzlePglite(client, drizzleOptions);
    return {
      db,
      driver: 'pglite',
      migrate: () => migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      ping: (timeoutMs) => pingDatabase(db, timeoutMs),
      close: () => client.close(),
      withStatementTimeout: () => ({ db, close: async () => {} }),
    };
  }

  const openPool = (config: pg.PoolConfig = {}) => {
    const pool = new pg.Pool({
      connectionString: location.connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs,
      ...config,
    });
    pool.on('error', (error) => options.onIdleConnectionError?.(error));
    // pg-pool listens for errors of idle clients only. A client checked out (a transaction between
    // two statements) whose connection dies (database restart) would emit an unhandled 'error' and
    // crash the process; the statement in progress, or the next one, fails anyway and becomes a 503.
    pool.on('connect', (client) => client.on('error', () => {}));
    return pool;
  };
  const pool = openPool();
  const db = drizzleNodePg(pool, drizzleOptions);
  return {
    db,
    driver: 'pg',
    migrate: async () => {
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        // The migrator must run on the session that holds the lock, hence a drizzle on this client.
        await migrateNodePg(drizzleNodePg(client), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
        client.release();
      }
    },
    ping: (timeoutMs) => pingDatabase(db, timeoutMs),
    close: () => pool.end(),
    withStatementTimeout: (timeoutMs) => {
      if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
        throw new RangeError('timeoutMs must be a positive integer');
      // libpq's `options` startup parameter: the setting holds for the whole session.
      const bounded = openPool({ options: `-c statement_timeout=${timeoutMs}` });
      return { db: drizzleNodePg(bounded, drizzleOptions), close: () => bounded.end() };
    },
  };
}

async function pingDatabase(db: Database, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailableError(`database did not answer select 1 within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([db.execute(sql`select 1`), deadline]);
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) throw error;
    throw new DatabaseUnavailableError(`database did not answer select 1: ${describeCause(error)}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Drizzle wraps driver errors ("Failed query: …"); the driver's own message is the useful one. */
function describeCause(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  if (current instanceof AggregateError && current.errors[0] instanceof Error) current = current.errors[0];
  return current instanceof Error ? current.message || current.name : String(current);
}
