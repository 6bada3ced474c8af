/**
 * Money is handled as integer cents in BigInt: a float would turn 3 × 9.99 into 29.969999…,
 * and a plain number loses exactness above 2^53 cents long before the overflow check below runs.
 */

/** numeric(12,2) holds at most 10 integer digits and 2 decimals: 9999999999.99. */
export const MAX_NUMERIC_12_2_CENTS = 999_999_999_999n;

const DECIMAL_AMOUNT = /^(\d+)(?:\.(\d{1,2}))?$/;

/** "9.99" → 999n, "10" → 1000n, "0.5" → 50n; undefined when not a plain non-negative amount. */
export function parseAmountToCents(amount: string): bigint | undefined {
  const match = DECIMAL_AMOUNT.exec(amount);
  if (!match) return undefined;
  const [, units, fraction = ''] = match;
  return BigInt(units!) * 100n + BigInt(fraction.padEnd(2, '0'));
}

/** 2997n → "29.97"; the same text numeric(12,2) gives back, so responses compare as strings. */
export function formatCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const absolute = cents < 0n ? -cents : cents;
  const units = absolute / 100n;
  const fraction = (absolute % 100n).toString().padStart(2, '0');
  return `${sign}${units}.${fraction}`;
}
