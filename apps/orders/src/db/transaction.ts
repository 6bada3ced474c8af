import { sql } from 'drizzle-orm';
import { TransactionTimeoutError } from '../errors.js';
import type { AppDatabase } from './client.js';
import { findSqlState } from './sql-state.js';

/** SQLSTATE 57014 query_canceled: what statement_timeout raises. */
const QUERY_CANCELED = '57014';

/**
 * Runs `work` in one transaction that commits only if it finishes within `timeoutMs`, else rolls
 * back and throws TransactionTimeoutError (503).
 *
 * Two mechanisms, because neither alone covers both drivers:
 * - `SET LOCAL statement_timeout` makes PostgreSQL cancel a statement stuck on a lock or a slow
 *   plan; the error aborts the transaction server-side.
 * - A JS timer aborts `signal`; after `work` returns we refuse to COMMIT once it fired, so the
 *   transaction rolls back even when the time went to JavaScript (or to PGlite, which runs on the
 *   event loop and cannot cancel itself).
 *
 * The 503 is answered only after the ROLLBACK has completed, so a caller that got 503 can rely on
 * nothing having been stored. The price: a step of `work` that waits on something other than the
 * database must watch `signal` (statements are already bounded by statement_timeout). The decision to commit is taken synchronously with the deadline
 * check, so a timer firing while COMMIT is already on the wire cannot turn a stored order into a 503.
 */
export async function runInTransactionWithTimeout<T>(
  db: AppDatabase,
  timeoutMs: number,
  work: (tx: AppDatabase, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let committing = false;
  const timer = setTimeout(() => {
    if (!committing) controller.abort(new TransactionTimeoutError(timeoutMs));
  }, timeoutMs);
  try {
    return await db.transaction(async (tx) => {
      controller.signal.throwIfAborted();
      // set_config(…, true) is SET LOCAL: it ends with this transaction and never leaks to the
      // pooled connection's next user.
      await tx.execute(sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`);
      const result = await work(tx, controller.signal);
      controller.signal.throwIfAborted();
      committing = true;
      return result;
    });
  } catch (error) {
    if (controller.signal.aborted || findSqlState(error) === QUERY_CANCELED) {
      throw new TransactionTimeoutError(timeoutMs);
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
