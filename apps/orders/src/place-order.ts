import type { AppDatabase } from './db/client.js';
import type { OrderStatus } from './db/schema.js';
import { findSqlState } from './db/sql-state.js';
import { TransactionTimeoutError } from './errors.js';
import { computeOrderTotal } from './pricing.js';
import { insertOrderForEmail } from './repositories/orders.js';

/** SQLSTATE 57014 query_canceled: what statement_timeout raises. */
const QUERY_CANCELED = '57014';
/** A lost race for a new e-mail needs one more attempt (see insertOrderForEmail); three is plenty. */
const MAX_ATTEMPTS = 3;

export interface PlaceOrderSettings {
  unitPriceCents: bigint;
  txTimeoutMs: number;
  /**
   * Test seam, awaited within the order's deadline before the order statement is sent (time spent
   * between finding the user and inserting the order, as it were).
   */
  beforeOrderInsert?: ((signal: AbortSignal) => Promise<void>) | undefined;
}

export interface PlacedOrder {
  id: number;
  email: string;
  quantity: number;
  status: OrderStatus;
}

/**
 * Places one order for an e-mail address: finds or creates the user and inserts the order in one
 * statement (`insertOrderForEmail`), with a deadline of `txTimeoutMs`. Shared by `POST /orders`
 * (API key) and `POST /bff/orders` (session).
 *
 * `db` must be the app's `orderDb`, on whose connections PostgreSQL cancels a statement after the
 * same `txTimeoutMs` (statement_timeout): a statement stuck on a lock becomes a 503 and stores
 * nothing, since one statement is one transaction. A JS timer covers the rest: no statement is
 * started once the deadline has passed. So, as before, a 503 means nothing was stored.
 */
export async function placeOrder(
  db: AppDatabase,
  input: { email: string; quantity: number },
  settings: PlaceOrderSettings,
): Promise<PlacedOrder> {
  const email = input.email.toLowerCase();
  // Priced first: an overflowing total is a 400 and never reaches the database.
  const total = computeOrderTotal(input.quantity, settings.unitPriceCents);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new TransactionTimeoutError(settings.txTimeoutMs)),
    settings.txTimeoutMs,
  );
  try {
    await settings.beforeOrderInsert?.(controller.signal);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      controller.signal.throwIfAborted();
      const order = await insertOrderForEmail(db, { email, quantity: input.quantity, total });
      if (order) return { id: order.id, email, quantity: order.quantity, status: order.status };
    }
    throw new Error(`no user row for the order after ${MAX_ATTEMPTS} attempts`);
  } catch (error) {
    if (controller.signal.aborted || findSqlState(error) === QUERY_CANCELED) {
      throw new TransactionTimeoutError(settings.txTimeoutMs);
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
