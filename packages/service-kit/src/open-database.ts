import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { Logger } from 'drizzle-orm/logger';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { DatabaseUnavailableError } from './database-unavailable.js';
import type { DatabaseLocation } from './database-url.js';
import { FailoverPool, failoverRetryWindow } from './failover-pool.js';
import { claimPgliteDirectory, type PgliteDirectoryLock } from './pglite-directory-lock.js';
import { sharePglite } from './pglite-share.js';
import { isTracingOn } from './tracing/active-span.js';
import { withStatementSpans } from './tracing/pglite-spans.js';
import { transactionPoolerMode, UnnamedStatementClient } from './transaction-pooler.js';

/**
 * The one type every repository takes. Both drivers' databases and their transactions
 * (PgTransaction extends PgDatabase) are assignable to it, so there is a single Drizzle code path
 * above the driver.
 */
export type Database<TSchema extends Record<string, unknown>> = PgDatabase<PgQueryResultHKT, TSchema>;

export interface DatabaseHandle<TSchema extends Record<string, unknown>> {
  readonly db: Database<TSchema>;
  readonly driver: DatabaseLocation['driver'];
  /** Applies the app's committed drizzle-kit migrations. Safe when several instances start together. */
  migrate(): Promise<void>;
  /** `select 1` answered within `timeoutMs`, else DatabaseUnavailableError. */
  ping(timeoutMs: number): Promise<void>;
  /** Idempotent: closing twice (app shutdown, then a test's cleanup) is not an error. */
  close(): Promise<void>;
  /**
   * The same database through connections on which PostgreSQL cancels any statement running longer
   * than `timeoutMs` (`statement_timeout` set when each connection starts, in a pool of its own, so
   * the main pool's statements stay unbounded). PGlite cannot cancel a statement (one session,
   * running on the event loop): there it is `db` itself. The caller closes it (before the handle).
   */
  withStatementTimeout(timeoutMs: number): BoundedDatabase<TSchema>;
  /** The node-postgres pool's connections (metrics); undefined on PGlite, which has no pool. */
  poolStats?(): { total: number; idle: number; waiting: number } | undefined;
}

export interface BoundedDatabase<TSchema extends Record<string, unknown>> {
  readonly db: Database<TSchema>;
  close(): Promise<void>;
}

/** What belongs to the app: its schema, its migrations and its advisory-lock key. */
export interface DatabaseDefinition<TSchema extends Record<string, unknown>> {
  schema: TSchema;
  migrationsFolder: string;
  /**
   * pg_advisory_lock key, different per app and the same in every instance of one app: instances
   * starting together apply migrations one after the other instead of racing on CREATE TABLE.
   */
  migrationLockKey: number;
}

export interface OpenDatabaseOptions {
  /** Bounds establishing a connection (pool checkout on PostgreSQL); fail fast while the database is down. */
  connectTimeoutMs?: number;
  /** Largest number of pooled connections (node-postgres' default, 10, when unset). */
  maxConnections?: number;
  /** Drizzle query logger; tests inject a counting one. */
  logger?: Logger;
  /** Errors of idle pooled connections (e.g. the server restarted); without a listener pg crashes the process. */
  onIdleConnectionError?: (error: Error) => void;
  /**
   * A `pglite://<dir>` database this process opens is also served on a Unix socket in a 0700 folder
   * (recorded in `<dir>.lock`), so the operator's commands, run by the same user, reach it while this
   * process runs. Development only: the protocol server has no authentication beyond the folder's
   * permissions.
   */
  shareOnLoopback?: boolean;
}

export async function openDatabase<TSchema extends Record<string, unknown>>(
  location: DatabaseLocation,
  definition: DatabaseDefinition<TSchema>,
  options: OpenDatabaseOptions = {},
): Promise<DatabaseHandle<TSchema>> {
  if (location.driver === 'pg') return openNodePostgres(location.connectionString, definition, options);
  if (location.dataDir === undefined) return pgliteDatabase(await PGlite.create(), definition, options);
  // PGlite creates its own folder but not the parents (`.data/` on a first start).
  await mkdir(dirname(location.dataDir), { recursive: true });
  // One process opens the folder; the others reach it through that process (pglite-directory-lock.ts).
  const claim = claimPgliteDirectory(location.dataDir);
  if (claim.kind === 'shared') return openNodePostgres(claim.connectionString, definition, options);
  return openOwnedPglite(location.dataDir, claim.lock, definition, options);
}

async function openOwnedPglite<TSchema extends Record<string, unknown>>(
  dataDir: string,
  lock: PgliteDirectoryLock,
  definition: DatabaseDefinition<TSchema>,
  options: OpenDatabaseOptions,
): Promise<DatabaseHandle<TSchema>> {
  let client: PGlite | undefined;
  let share: Awaited<ReturnType<typeof sharePglite>> | undefined;
  try {
    client = await PGlite.create(dataDir);
    if (options.shareOnLoopback) {
      share = await sharePglite(client);
      lock.publish(share.socketDir);
    }
  } catch (error) {
    await share?.stop();
    if (client && !client.closed) await client.close();
    lock.release();
    throw error;
  }
  const handle = pgliteDatabase(client, definition, options);
  const { close } = handle;
  return {
    ...handle,
    close: async () => {
      // Socket clients first, then the database, then the lock: nobody opens it half-closed.
      await share?.stop();
      await close();
      lock.release();
    },
  };
}

/** A handle on an already created PGlite instance (tests start theirs from a migrated template). */
export function pgliteDatabase<TSchema extends Record<string, unknown>>(
  client: PGlite,
  { schema, migrationsFolder }: DatabaseDefinition<TSchema>,
  options: Pick<OpenDatabaseOptions, 'logger'> = {},
): DatabaseHandle<TSchema> {
  const db = drizzlePglite({
    // With tracing on, statements inside a request get spans as on PostgreSQL (pglite-spans.ts).
    client: isTracingOn() ? withStatementSpans(client) : client,
    schema,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    db,
    driver: 'pglite',
    // One process owns a PGlite data directory, so there is nobody to race with.
    migrate: () => migratePglite(db, { migrationsFolder }),
    ping: (timeoutMs) => pingDatabase(() => db.execute(sql`select 1`), timeoutMs),
    close: async () => {
      if (!client.closed) await client.close();
    },
    withStatementTimeout: () => ({ db, close: async () => {} }),
  };
}

function openNodePostgres<TSchema extends Record<string, unknown>>(
  databaseUrl: string,
  { schema, migrationsFolder, migrationLockKey }: DatabaseDefinition<TSchema>,
  options: OpenDatabaseOptions,
): DatabaseHandle<TSchema> {
  const drizzleOptions = { schema, ...(options.logger ? { logger: options.logger } : {}) };
  // Behind PgBouncer's transaction pooling nothing may live in a session (transaction-pooler.ts).
  const pooler = transactionPoolerMode(databaseUrl);
  const { connectionString, retryWindowMs } = failoverRetryWindow(pooler.connectionString);
  const { transactionPooling } = pooler;
  const openInnerPool = (config: pg.PoolConfig) => {
    const pool = new pg.Pool({
      connectionString,
      ...(transactionPooling ? { Client: UnnamedStatementClient } : {}),
      ...(options.maxConnections !== undefined ? { max: options.maxConnections } : {}),
      ...(options.connectTimeoutMs !== undefined
        ? { connectionTimeoutMillis: options.connectTimeoutMs }
        : {}),
      idleTimeoutMillis: 30_000,
      ...config,
    });
    pool.on('error', (error) => options.onIdleConnectionError?.(error));
    // pg-pool listens for errors of idle clients only. A client checked out (a transaction between
    // two statements) whose connection dies (database restart) would emit an unhandled 'error' and
    // crash the process; the statement in progress, or the next one, fails anyway and becomes a 503.
    pool.on('connect', (client) => client.on('error', () => {}));
    return pool;
  };
  // Refreshed after a failover, retrying only what is safe to repeat (failover-pool.ts).
  const openPool = (config: pg.PoolConfig = {}, localStatementTimeoutMs?: number) =>
    new FailoverPool(() => openInnerPool(config), { localStatementTimeoutMs, retryWindowMs });
  const pool = openPool();
  const db = withTransactionFailover(drizzleNodePg({ client: pool, ...drizzleOptions }), pool);
  return {
    db,
    driver: 'pg',
    migrate: () =>
      (transactionPooling ? migrateInOneTransaction : migrateUnderLock)(
        pool,
        migrationsFolder,
        migrationLockKey,
      ),
    poolStats: () => pool.stats(),
    ping: (timeoutMs) => pingDatabase(() => pool.probe('select 1'), timeoutMs),
    close: () => endPool(pool),
    withStatementTimeout: (timeoutMs) => {
      if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
        throw new RangeError('timeoutMs must be a positive integer');
      // libpq's `options` startup parameter: the setting holds for the whole session. A transaction
      // pooler refuses it, so there each statement gets its own SET LOCAL instead.
      const bounded = transactionPooling
        ? openPool({}, timeoutMs)
        : openPool({ options: `-c statement_timeout=${timeoutMs}` });
      return {
        db: withTransactionFailover(drizzleNodePg({ client: bounded, ...drizzleOptions }), bounded),
        close: () => endPool(bounded),
      };
    },
  };
}

/** `db.transaction` run again when a failover rolled it back (FailoverPool#runTransaction). */
function withTransactionFailover<D extends { transaction: (...args: never[]) => Promise<unknown> }>(
  db: D,
  pool: FailoverPool,
): D {
  const transaction = db.transaction.bind(db) as (...args: unknown[]) => Promise<unknown>;
  db.transaction = ((...args: unknown[]) =>
    pool.runTransaction(() => transaction(...args))) as D['transaction'];
  return db;
}

async function endPool(pool: pg.Pool): Promise<void> {
  if (!pool.ended) await pool.end();
}

/**
 * drizzle's migrator takes no lock; two instances starting together would both try to create the
 * tables. A session advisory lock on one dedicated connection serialises them, and the migrator
 * must run on the session that holds the lock, hence a drizzle on this client.
 */
async function migrateUnderLock(pool: pg.Pool, migrationsFolder: string, lockKey: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [lockKey]);
    await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [lockKey]).catch(() => undefined);
    client.release();
  }
}

/**
 * The migration lock behind a transaction pooler: a session lock could be taken on one server
 * connection and its unlock sent on another (held for ever), so the lock is transaction-scoped and
 * the migrator runs inside that transaction, on one server connection. Drizzle's own BEGIN inside
 * it is only a warning; its COMMIT (or ROLLBACK) ends the whole unit and releases the lock.
 */
async function migrateInOneTransaction(
  pool: pg.Pool,
  migrationsFolder: string,
  lockKey: number,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1)', [lockKey]);
    await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder });
  } finally {
    // Nothing is left open when the migrator committed; after a failure this ends the transaction.
    await client.query('rollback').catch(() => undefined);
    client.release();
  }
}

async function pingDatabase(selectOne: () => Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailableError(`database did not answer select 1 within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([selectOne(), deadline]);
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
