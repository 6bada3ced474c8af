import pg from 'pg';
import {
  classifyDatabaseFailure,
  type DatabaseFailure,
  type DatabaseFailureKind,
} from './database-unavailable.js';

/**
 * What a failover did to this process's database statements, by failure kind, since it started:
 * read by `registerMetrics` (`<prefix>database_failures_total`, `…_retries_total`,
 * `…_pool_refreshes_total`). Process-wide, like Node's own process metrics.
 */
export const databaseFailoverTally = {
  failures: new Map<DatabaseFailureKind, number>(),
  retries: new Map<DatabaseFailureKind, number>(),
  poolRefreshes: new Map<DatabaseFailureKind, number>(),
};

function count(tally: Map<DatabaseFailureKind, number>, kind: DatabaseFailureKind): void {
  tally.set(kind, (tally.get(kind) ?? 0) + 1);
}

/**
 * A statement that may be sent again whatever happened to the first attempt: a plain read on the
 * pool (its own implicit transaction), without row locks or sequence calls. Writes, `SELECT … FOR
 * UPDATE` and everything inside an explicit transaction (`connect()`) are not: their commit state
 * is unknown when the connection dies under them, and sending them again could apply them twice.
 */
export function isRepeatableStatement(text: string): boolean {
  if (!/^\s*(select|show)\b/i.test(text)) return false;
  return !/\bfor\s+(update|no\s+key\s+update|share|key\s+share)\b|\b(nextval|setval|pg_advisory_\w*)\s*\(/i.test(
    text,
  );
}

function statementText(config: unknown): string {
  if (typeof config === 'string') return config;
  const text = (config as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '';
}

// pg's overloads cannot be forwarded one by one; the arguments go through as they came.
// biome-ignore lint/suspicious/noExplicitAny: forwarding pg.Pool's overloaded signatures
type AnyArgs = any[];

/**
 * How long a statement that may be sent again keeps being sent while no server answers: short by
 * default, so requests still fail fast (503) while the database is simply down; a cluster whose
 * switchover leaves a longer gap sets `failover_retry_ms` in DATABASE_URL (see below).
 */
export const DEFAULT_FAILOVER_RETRY_WINDOW_MS = 2000;

/** DATABASE_URL's query parameter for the retry window, ms; removed before node-postgres sees the URL. */
export const FAILOVER_RETRY_PARAMETER = 'failover_retry_ms';

/** DATABASE_URL without `failover_retry_ms`, and its value (undefined: the default window). */
export function failoverRetryWindow(connectionString: string): {
  connectionString: string;
  retryWindowMs: number | undefined;
} {
  const url = new URL(connectionString);
  const value = url.searchParams.get(FAILOVER_RETRY_PARAMETER);
  if (value === null) return { connectionString, retryWindowMs: undefined };
  if (!/^\d+$/.test(value))
    throw new RangeError(`${FAILOVER_RETRY_PARAMETER} must be a whole number of milliseconds`);
  url.searchParams.delete(FAILOVER_RETRY_PARAMETER);
  return { connectionString: url.toString(), retryWindowMs: Number(value) };
}
const MAX_BACKOFF_MS = 1000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** 0 ms before the first retry (a refreshed pool usually answers at once), then 100, 200, 400 … 1000 ms. */
function backoffMs(retry: number): number {
  return retry === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 50 * 2 ** retry);
}

export interface FailoverPoolOptions {
  /**
   * How long (ms) a statement that is safe to send again keeps being sent, with backoff, while no
   * leader answers (a switchover leaves a few seconds without one); default 2 s. At least one
   * retry is made whatever the window.
   */
  retryWindowMs?: number | undefined;
  /**
   * A statement timeout for every statement sent by `query`, as `SET LOCAL` in a transaction of
   * its own: behind a transaction pooler a session setting cannot be relied on.
   */
  localStatementTimeoutMs?: number | undefined;
}

/**
 * A node-postgres pool that survives a failover (a Patroni switchover, a killed leader behind
 * HAProxy or a pooler):
 * - a failure that says the pool's connections point at a server that is gone or demoted
 *   (`staleConnections`: read-only transaction, admin shutdown, connection reset) refreshes the
 *   pool: new statements get new connections (through the proxy, to the new leader) and the old
 *   pool is ended in the background once its checked-out clients come back;
 * - a statement is sent again, with backoff for up to `retryWindowMs`, only when that is safe: it
 *   never reached the server (its connection could not be made, a proxy with no leader behind it
 *   closed it, or the client was already closed), it cannot have committed (`neverCommitted`:
 *   refused before running, by a read-only server, or its session was terminated with an error
 *   before the commit, as a switchover's shutdown does), or it is a repeatable read
 *   (`isRepeatableStatement`). A write whose commit state is unknown is never retried here: the
 *   caller gets the error (a 503) and the client decides.
 * - `connect()` (a transaction's connection) is retried the same way while it cannot be made;
 *   once the transaction runs, its unit is the caller's.
 * Drizzle accepts it as its client because it is a `pg.Pool`.
 */
export class FailoverPool extends pg.Pool {
  #current: pg.Pool;
  readonly #openInner: () => pg.Pool;
  readonly #retryWindowMs: number;
  readonly #localStatementTimeoutMs: number | undefined;
  /** Set when `end()` starts: a statement failing while the pool closes is neither retried nor refreshed. */
  #closing = false;

  constructor(openInner: () => pg.Pool, options: FailoverPoolOptions = {}) {
    // The base pool only satisfies `instanceof pg.Pool`; it never opens a connection.
    super({ max: 1 });
    this.#openInner = openInner;
    this.#retryWindowMs = options.retryWindowMs ?? DEFAULT_FAILOVER_RETRY_WINDOW_MS;
    this.#localStatementTimeoutMs = options.localStatementTimeoutMs;
    this.#current = openInner();
  }

  override query(...args: AnyArgs): AnyArgs[number] {
    if (typeof args.at(-1) === 'function') return this.#current.query(...(args as [string]));
    return this.#queryWithFailover(args);
  }

  override connect(...args: AnyArgs): AnyArgs[number] {
    if (typeof args[0] === 'function') return this.#current.connect(...(args as []));
    return this.#acquire(Date.now() + this.#retryWindowMs).then(({ client, pool }) =>
      watchTransaction(client, pool),
    );
  }

  /**
   * Runs `transaction` (one whole transaction on a `connect()`ed client, e.g. Drizzle's
   * `db.transaction`) and runs it again, with the statements' backoff and window, when it failed
   * as a failover and cannot have committed: a statement failed before its COMMIT was sent (the
   * server rolls an open transaction back when the session ends), or the COMMIT itself was
   * refused (`neverCommitted`). A COMMIT whose answer was lost is not run again. `transaction`
   * must do nothing but database work (it may run more than once).
   */
  async runTransaction<T>(transaction: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.#retryWindowMs;
    for (let retry = 0; ; retry++) {
      try {
        return await transaction();
      } catch (error) {
        const pool = uncommittedTransactionPool(error);
        const failure = pool === undefined ? null : this.#noteFailure(error, pool);
        if (failure === null || (retry > 0 && Date.now() >= deadline)) throw error;
        count(databaseFailoverTally.retries, failure.kind);
        await pause(backoffMs(retry));
      }
    }
  }

  /**
   * One statement on the current pool, sent once: a health probe (readiness, `database_up` at
   * scrape time) must say how the database is now, within its own deadline, not wait out the
   * retry window of the statements it stands for. A stale pool is still refreshed.
   */
  async probe(text: string): Promise<void> {
    const pool = this.#current;
    try {
      await pool.query(text);
    } catch (error) {
      this.#noteFailure(error, pool);
      throw error;
    }
  }

  /** The current pool's connections (the base pool has none). */
  stats(): { total: number; idle: number; waiting: number } {
    const pool = this.#current;
    return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }

  override async end(): Promise<void> {
    this.#closing = true;
    if (!this.#current.ended) await this.#current.end();
    if (!this.ended && !this.ending) await super.end();
  }

  /** New connections for every later statement; the old pool ends once its clients are back. */
  refresh(): void {
    if (this.#closing) return;
    const old = this.#current;
    this.#current = this.#openInner();
    old.end().catch(() => {});
  }

  async #queryWithFailover(args: AnyArgs): Promise<unknown> {
    const deadline = Date.now() + this.#retryWindowMs;
    const repeatable = isRepeatableStatement(statementText(args[0]));
    for (let retry = 0; ; retry++) {
      const { client, pool } = await this.#acquire(deadline);
      try {
        const result = await this.#send(client, args);
        client.release();
        return result;
      } catch (error) {
        // As pg.Pool#query does: a client whose statement failed is not given to the next caller.
        client.release(error instanceof Error ? error : true);
        const failure = this.#noteFailure(error, pool);
        if (failure === null) throw error;
        if (!failure.neverCommitted && !repeatable) throw error;
        if (retry > 0 && Date.now() >= deadline) throw error;
        count(databaseFailoverTally.retries, failure.kind);
        await pause(backoffMs(retry));
      }
    }
  }

  async #send(client: pg.PoolClient, args: AnyArgs): Promise<unknown> {
    const timeoutMs = this.#localStatementTimeoutMs;
    if (timeoutMs === undefined) return client.query(...(args as [string]));
    // set_config(…, true) is SET LOCAL: it ends with this transaction, on this server connection.
    await client.query('begin');
    await client.query("select set_config('statement_timeout', $1, true)", [String(timeoutMs)]);
    const result = await client.query(...(args as [string]));
    await client.query('commit');
    return result;
  }

  /**
   * A connection from the current pool. Nothing was sent on a connection that could not be made
   * (refused, cut by a proxy without a leader, a server starting up), so making it is retried
   * until `deadline` whatever the failure says about commit state.
   */
  async #acquire(deadline: number): Promise<{ client: pg.PoolClient; pool: pg.Pool }> {
    for (let retry = 0; ; retry++) {
      const pool = this.#current;
      try {
        return { client: await pool.connect(), pool };
      } catch (error) {
        const failure = this.#noteFailure(error, pool);
        if (failure === null || Date.now() >= deadline) throw error;
        count(databaseFailoverTally.retries, failure.kind);
        await pause(backoffMs(retry + 1));
      }
    }
  }

  /**
   * Classifies and counts a failure on `pool`, refreshing it when its connections are stale (only
   * the first of the statements that failed on one pool replaces it); null: not an outage.
   */
  #noteFailure(error: unknown, pool: pg.Pool): DatabaseFailure | null {
    const failure = classifyDatabaseFailure(error);
    if (failure === null || this.#closing) return null;
    count(databaseFailoverTally.failures, failure.kind);
    if (failure.staleConnections && pool === this.#current) {
      count(databaseFailoverTally.poolRefreshes, failure.kind);
      this.refresh();
    }
    return failure;
  }
}

/** Errors met by a transaction that cannot have committed, with the pool its connection came from. */
const uncommittedTransactionErrors = new WeakMap<object, pg.Pool>();

function uncommittedTransactionPool(error: unknown): pg.Pool | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const pool = uncommittedTransactionErrors.get(current);
    if (pool !== undefined) return pool;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Notes, while `client` is checked out, whether its transaction's COMMIT was sent: every error
 * before that (and the error of a COMMIT refused before it ran) belongs to a transaction that
 * cannot have committed; after a COMMIT whose answer was lost, none does. Removed on release,
 * since the pool hands the client to the next caller.
 */
function watchTransaction(client: pg.PoolClient, pool: pg.Pool): pg.PoolClient {
  const query = client.query as (...args: AnyArgs) => AnyArgs[number];
  const release = client.release;
  let commitState: 'not sent' | 'unknown' = 'not sent';
  const watched = (...args: AnyArgs): AnyArgs[number] => {
    if (typeof args.at(-1) === 'function') return query.apply(client, args);
    const isCommit = /^\s*(commit|end)\b/i.test(statementText(args[0]));
    if (isCommit) commitState = 'unknown';
    return (query.apply(client, args) as Promise<unknown>).catch((error: unknown) => {
      if (isCommit && classifyDatabaseFailure(error)?.neverCommitted) commitState = 'not sent';
      if (commitState === 'not sent' && typeof error === 'object' && error !== null)
        uncommittedTransactionErrors.set(error, pool);
      throw error;
    });
  };
  client.query = watched as typeof client.query;
  client.release = (...releaseArgs: AnyArgs) => {
    // The prototype's methods again for the next caller.
    delete (client as Partial<pg.PoolClient>).query;
    delete (client as Partial<pg.PoolClient>).release;
    return release.apply(client, releaseArgs as []);
  };
  return client;
}
