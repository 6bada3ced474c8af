import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import type { DatabaseDefinition, DatabaseHandle, OpenDatabaseOptions } from './database-handle.js';
import { pingDatabase } from './database-ping.js';
import type { DatabaseLocation } from './database-url.js';
import { FailoverPool, failoverRetryWindow } from './failover-pool.js';
import { MIGRATION_LOCK_TIMEOUT_MS, retryWhileGivingWay } from './migration-locks.js';
import { claimPgliteDirectory } from './pglite-directory-lock.js';
import { transactionPoolerMode, UnnamedStatementClient } from './transaction-pooler.js';

export type {
  BoundedDatabase,
  Database,
  DatabaseDefinition,
  DatabaseHandle,
  OpenDatabaseOptions,
} from './database-handle.js';

export async function openDatabase<TSchema extends Record<string, unknown>>(
  location: DatabaseLocation,
  definition: DatabaseDefinition<TSchema>,
  options: OpenDatabaseOptions = {},
): Promise<DatabaseHandle<TSchema>> {
  if (location.driver === 'pg') return openNodePostgres(location.connectionString, definition, options);
  // PGlite (its WebAssembly PostgreSQL and drizzle's driver for it) is loaded only for a pglite:// URL,
  // so a server on PostgreSQL never loads it.
  const pglite = await import('./open-pglite.js');
  if (location.dataDir === undefined) return pglite.openInMemoryPglite(definition, options);
  // PGlite creates its own folder but not the parents (`.data/` on a first start).
  await mkdir(dirname(location.dataDir), { recursive: true });
  // One process opens the folder; the others reach it through that process (pglite-directory-lock.ts).
  const claim = claimPgliteDirectory(location.dataDir);
  if (claim.kind === 'shared') return openNodePostgres(claim.connectionString, definition, options);
  return pglite.openOwnedPglite(location.dataDir, claim.lock, definition, options);
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
    // The migrations give way to the requests of instances still serving (migration-locks.ts).
    await client.query(`set lock_timeout = ${MIGRATION_LOCK_TIMEOUT_MS}`);
    await retryWhileGivingWay(() => migrateNodePg(drizzleNodePg({ client }), { migrationsFolder }));
  } finally {
    await client.query('reset lock_timeout').catch(() => undefined);
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
    // Each attempt is its own transaction: the lock, the setting and the migrations together
    // (migration-locks.ts: an attempt that gave way is rolled back and tried again).
    await retryWhileGivingWay(async () => {
      try {
        await client.query('begin');
        await client.query('select pg_advisory_xact_lock($1)', [lockKey]);
        await client.query(`set local lock_timeout = ${MIGRATION_LOCK_TIMEOUT_MS}`);
        await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder });
      } finally {
        // Nothing is left open when the migrator committed; after a failure this ends the transaction.
        await client.query('rollback').catch(() => undefined);
      }
    });
  } finally {
    client.release();
  }
}
