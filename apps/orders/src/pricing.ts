import { OrderTotalOutOfRangeError } from './errors.js';
import { formatCents, MAX_NUMERIC_12_2_CENTS } from './money.js';

/**
 * total = quantity × unit price, exactly, as the decimal string stored in orders.total.
 * Throws OrderTotalOutOfRangeError (400) instead of letting numeric(12,2) overflow in the database.
 */
export function computeOrderTotal(quantity: number, unitPriceCents: bigint): string {
  const totalCents = BigInt(quantity) * unitPriceCents;
  if (totalCents > MAX_NUMERIC_12_2_CENTS) throw new OrderTotalOutOfRangeError(quantity);
  return formatCents(totalCents);
}
