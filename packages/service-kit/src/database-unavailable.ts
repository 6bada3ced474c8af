/**
 * "The database cannot be reached right now": answered 503 (an outage), not 500 (a bug). Thrown by
 * the handle's `ping` and by the apps when a database cannot be opened.
 */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * What a database failure says about the statement that met it and about the pool's connections.
 * - `neverCommitted`: the statement cannot have taken effect (refused before it ran, refused by a
 *   read-only server, or its session terminated with an error before its commit), so even a write
 *   may be sent again; otherwise its commit state is unknown
 *   (the connection died while it ran) and only a statement safe to repeat (a read) may be.
 * - `staleConnections`: the failure is what a failover looks like from a pooled connection (the old
 *   leader shut down, was demoted to a read-only standby, or its connections were cut): the other
 *   idle connections point at the same server and are dropped (the pool is refreshed).
 */
export interface DatabaseFailure {
  kind: DatabaseFailureKind;
  neverCommitted: boolean;
  staleConnections: boolean;
}

export type DatabaseFailureKind =
  | 'read_only'
  | 'admin_shutdown'
  | 'crash_shutdown'
  | 'cannot_connect_now'
  | 'connection_reset'
  | 'client_closed'
  | 'connection_refused'
  | 'connection_exception'
  | 'insufficient_resources'
  | 'timeout'
  | 'closed';

interface FailureRule extends DatabaseFailure {
  /** SQLSTATE or Node error codes, or a pattern of SQLSTATEs. */
  codes?: readonly string[];
  codePattern?: RegExp;
  /** node-postgres / PGlite messages without a code. */
  messages?: readonly string[];
}

/**
 * Every database failure that is an outage (503), not a bug (500), one row per kind; the first
 * matching row wins. SQLSTATEs from PostgreSQL's Appendix A.
 */
const FAILURE_RULES: readonly FailureRule[] = [
  // 25006 read_only_sql_transaction: a write reached a standby, e.g. the old leader after a
  // failover (or a pooler still pointing at it). Refused, so nothing was written.
  { kind: 'read_only', codes: ['25006'], neverCommitted: true, staleConnections: true },
  // 57P01 admin_shutdown as an ErrorResponse (pg_terminate_backend, a fast shutdown, Patroni
  // demoting the leader for a switchover): the backend raised FATAL in ProcessInterrupts
  // (src/backend/tcop/postgres.c), which CHECK_FOR_INTERRUPTS reaches only while interrupts are
  // not held. CommitTransaction (src/backend/access/transam/xact.c) holds them from before the
  // commit record to its end, and a backend told to die while SyncRepWaitForLSN
  // (src/backend/replication/syncrep.c) waits for a synchronous standby after a local commit sends
  // only a WARNING and sets whereToSendOutput = DestNone, so that session ends without an
  // ErrorResponse (the client sees a reset: `connection_reset`, unknown state). A commit made when
  // the statement's Sync (or simple Query) is processed is followed by ReadyForQuery before the
  // next CHECK_FOR_INTERRUPTS, so the statement had already answered. Hence an ErrorResponse 57P01
  // for a statement in its own transaction means that transaction aborted. (The exception, which
  // this code never sends: a query string that runs its own COMMIT and then more statements.)
  { kind: 'admin_shutdown', codes: ['57P01'], neverCommitted: true, staleConnections: true },
  // 57P02 crash_shutdown comes from quickdie(), a signal handler that may run at any point, even
  // after a commit: the commit state is unknown.
  { kind: 'crash_shutdown', codes: ['57P02'], neverCommitted: false, staleConnections: true },
  // 57P03 cannot_connect_now: the server is starting or in recovery; refused at connection time.
  { kind: 'cannot_connect_now', codes: ['57P03'], neverCommitted: true, staleConnections: false },
  {
    kind: 'connection_reset',
    codes: ['ECONNRESET', 'EPIPE'],
    messages: ['Connection terminated'],
    neverCommitted: false,
    staleConnections: true,
  },
  // node-postgres refuses to send on a connection that already ended (the server or a proxy in
  // front of it closed it while it sat in the pool) or already failed (Client#query checks
  // `_queryable` and `_ending` before writing): the statement never left the process.
  {
    kind: 'client_closed',
    messages: [
      'Client was closed and is not queryable',
      'Client has encountered a connection error and is not queryable',
    ],
    neverCommitted: true,
    staleConnections: true,
  },
  // No connection was made, so no statement was sent: 08001 / 08004 (unable to establish /
  // rejected), refused sockets, names that do not resolve, the pool's connect timeout.
  {
    kind: 'connection_refused',
    codes: ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', '08001', '08004'],
    messages: ['timeout exceeded when trying to connect'],
    neverCommitted: true,
    staleConnections: false,
  },
  {
    kind: 'connection_exception',
    codePattern: /^08[0-9A-Z]{3}$/,
    neverCommitted: false,
    staleConnections: true,
  },
  // Class 53 (too many connections, out of memory or disk): commit state unknown for a write.
  {
    kind: 'insufficient_resources',
    codePattern: /^53[0-9A-Z]{3}$/,
    neverCommitted: false,
    staleConnections: false,
  },
  { kind: 'timeout', codes: ['ETIMEDOUT'], neverCommitted: false, staleConnections: true },
  {
    kind: 'closed',
    messages: ['Cannot use a pool after calling end on the pool', 'PGlite is closed'],
    neverCommitted: true,
    staleConnections: false,
  },
];

const MAX_CAUSE_DEPTH = 6;

/**
 * What `error` (or something in its `cause` chain: Drizzle wraps driver errors, or in an
 * AggregateError's `errors`) says about the database, by `FAILURE_RULES`; `null` when it is not a
 * database outage (a bug, a constraint violation, a syntax error).
 */
export function classifyDatabaseFailure(error: unknown): DatabaseFailure | null {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof DatabaseUnavailableError) {
      return { kind: 'connection_refused', neverCommitted: true, staleConnections: false };
    }
    const { code, message, cause, errors } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    const rule = FAILURE_RULES.find((candidate) => ruleMatches(candidate, code, message));
    if (rule !== undefined) {
      return {
        kind: rule.kind,
        neverCommitted: rule.neverCommitted,
        staleConnections: rule.staleConnections,
      };
    }
    // `connect ECONNREFUSED` for a host with several addresses (IPv4 and IPv6) arrives as an AggregateError.
    if (Array.isArray(errors)) {
      const inner = errors.map((item) => classifyDatabaseFailure(item)).find((found) => found !== null);
      if (inner !== undefined) return inner;
    }
    current = cause;
  }
  return null;
}

function ruleMatches(rule: FailureRule, code: unknown, message: unknown): boolean {
  if (typeof code === 'string' && (rule.codes?.includes(code) || rule.codePattern?.test(code))) return true;
  return typeof message === 'string' && (rule.messages ?? []).some((text) => message.includes(text));
}

/**
 * Whether `error` says the database is unavailable right now (answered 503, not 500): any failure
 * `classifyDatabaseFailure` knows, among them the failover errors (read-only transaction after a
 * demotion, admin shutdown, connection reset, cannot connect now).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return classifyDatabaseFailure(error) !== null;
}

/**
 * What an operator needs about a database outage that met a request, for its log line: the
 * failure kind, the driver's own code and message, and the statement's text when a query builder
 * wrapped the error (Drizzle's `query`). Never the statement's parameters: they may hold secrets.
 */
export function describeDatabaseFailure(
  error: unknown,
): { kind: DatabaseFailureKind; sqlState?: string; reason: string; statement?: string } | null {
  const failure = classifyDatabaseFailure(error);
  if (failure === null) return null;
  let statement: string | undefined;
  let current: unknown = error;
  let innermost: { code?: unknown; message?: unknown } = {};
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const { query, cause } = current as { query?: unknown; cause?: unknown };
    if (statement === undefined && typeof query === 'string') statement = query;
    innermost = current as typeof innermost;
    current = cause;
  }
  return {
    kind: failure.kind,
    // Not `code`: the apps' loggers redact fields by that name.
    ...(typeof innermost.code === 'string' ? { sqlState: innermost.code } : {}),
    reason: typeof innermost.message === 'string' ? innermost.message : String(innermost),
    ...(statement === undefined ? {} : { statement }),
  };
}
