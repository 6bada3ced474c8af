import pg from 'pg';

/**
 * Running behind a pooler in transaction pooling mode (PgBouncer `pool_mode = transaction`), where
 * each transaction (or statement outside one) may get another server connection, so nothing may
 * live in a session:
 * - named prepared statements (Drizzle's `.prepare(name)`; node-postgres prepares a named statement
 *   once per connection and then only binds it) are sent unnamed: parsed with every execution, on
 *   whichever server connection the pooler picked (PgBouncer before 1.21 does not track them);
 * - a session setting in the startup packet (libpq `options`, which PgBouncer refuses) becomes a
 *   `SET LOCAL` around each statement (see FailoverPool's `localStatementTimeoutMs`);
 * - the migration lock is transaction-scoped (`pg_advisory_xact_lock`), not a session lock that a
 *   later statement could not release.
 * Opted into with `pgbouncer=true` in DATABASE_URL's query, a parameter the pooler never sees.
 */
export const TRANSACTION_POOLER_PARAMETER = 'pgbouncer';

/** DATABASE_URL without our parameter, and whether it names a transaction pooler. */
export function transactionPoolerMode(connectionString: string): {
  connectionString: string;
  transactionPooling: boolean;
} {
  const url = new URL(connectionString);
  const value = url.searchParams.get(TRANSACTION_POOLER_PARAMETER);
  if (value === null) return { connectionString, transactionPooling: false };
  url.searchParams.delete(TRANSACTION_POOLER_PARAMETER);
  return { connectionString: url.toString(), transactionPooling: value === 'true' };
}

// biome-ignore lint/suspicious/noExplicitAny: forwarding pg.Client's overloaded signatures
type AnyArgs = any[];

/** A node-postgres client that sends every statement unnamed (see above); for `pg.Pool`'s `Client` option. */
export class UnnamedStatementClient extends pg.Client {
  override query(...args: AnyArgs): AnyArgs[number] {
    const [config, ...rest] = args;
    if (typeof config === 'object' && config !== null && typeof config.name === 'string') {
      const { name: _unnamed, ...unnamed } = config as { name: string };
      return super.query(unnamed as pg.QueryConfig, ...(rest as []));
    }
    return super.query(...(args as [string]));
  }
}
