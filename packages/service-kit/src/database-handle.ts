import type { Logger } from 'drizzle-orm/logger';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { DatabaseLocation } from './database-url.js';

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
