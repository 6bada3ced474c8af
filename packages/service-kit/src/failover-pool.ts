import pg from 'pg';
import { classifyDatabaseFailure, type DatabaseFailureKind } from './database-unavailable.js';

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
 * A node-postgres pool that survives a failover (a Patroni switchover, a killed leader behind
 * HAProxy or a pooler):
 * - a failure that says the pool's connections point at a server that is gone or demoted
 *   (`staleConnections`: read-only transaction, admin shutdown, connection reset) refreshes the
 *   pool: new statements get new connections (through the proxy, to the new leader) and the old
 *   pool is ended in the background once its checked-out clients come back;
 * - a statement that met a failure is sent once more only when that is safe: it cannot have
 *   committed (`neverCommitted`: refused before running, or by a read-only server), or it is a
 *   repeatable read (`isRepeatableStatement`). A write whose commit state is unknown is never
 *   retried here: the caller gets the error (a 503) and the client decides.
 * Transactions (`connect()`) go to the current pool as they are; their unit is the caller's.
 * Drizzle accepts it as its client because it is a `pg.Pool`.
 */
export class FailoverPool extends pg.Pool {
  #current: pg.Pool;
  readonly #openInner: () => pg.Pool;
  /** Set when `end()` starts: a statement failing while the pool closes is neither retried nor refreshed. */
  #closing = false;

  constructor(openInner: () => pg.Pool) {
    // The base pool only satisfies `instanceof pg.Pool`; it never opens a connection.
    super({ max: 1 });
    this.#openInner = openInner;
    this.#current = openInner();
  }

  override query(...args: AnyArgs): AnyArgs[number] {
    if (typeof args.at(-1) === 'function') return this.#current.query(...(args as [string]));
    return this.#queryWithFailover(args);
  }

  override connect(...args: AnyArgs): AnyArgs[number] {
    return this.#current.connect(...(args as []));
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
    const pool = this.#current;
    try {
      return await pool.query(...(args as [string]));
    } catch (error) {
      const failure = classifyDatabaseFailure(error);
      if (failure === null || this.#closing) throw error;
      count(databaseFailoverTally.failures, failure.kind);
      // Only the first of the statements that failed on one pool replaces it.
      if (failure.staleConnections && pool === this.#current) {
        count(databaseFailoverTally.poolRefreshes, failure.kind);
        this.refresh();
      }
      if (!failure.neverCommitted && !isRepeatableStatement(statementText(args[0]))) throw error;
      count(databaseFailoverTally.retries, failure.kind);
      return this.#current.query(...(args as [string]));
    }
  }
}
