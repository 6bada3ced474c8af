import { describe, expect, it } from 'vitest';
import { OrderTotalOutOfRangeError } from '../src/errors.js';
import { formatCents, MAX_NUMERIC_12_2_CENTS, parseAmountToCents } from '../src/money.js';
import { computeOrderTotal } from '../src/pricing.js';

describe('parseAmountToCents', () => {
  it.each([
    ['9.99', 999n],
    ['10', 1000n],
    ['0.5', 50n],
    ['0.07', 7n],
    ['9999999999.99', 999_999_999_999n],
  ])('%s → %s cents', (amount, cents) => {
    expect(parseAmountToCents(amount)).toBe(cents);
  });

  it.each(['', '-1', '1.234', '1,50', '1e3', ' 1', 'abc', '.5'])('rejects %j', (amount) => {
    expect(parseAmountToCents(amount)).toBeUndefined();
  });
});

describe('formatCents', () => {
  it.each([
    [0n, '0.00'],
    [7n, '0.07'],
    [2997n, '29.97'],
    [999_999_999_999n, '9999999999.99'],
  ])('%s → %s', (cents, text) => {
    expect(formatCents(cents)).toBe(text);
  });
});

describe('computeOrderTotal', () => {
  it('is exact where floating point is not (3 × 0.07 = 0.21)', () => {
    expect(computeOrderTotal(3, 7n)).toBe('0.21');
  });

  it('multiplies in integer cents', () => {
    expect(computeOrderTotal(3, 999n)).toBe('29.97');
  });

  it('accepts the largest total numeric(12,2) can hold', () => {
    expect(computeOrderTotal(1, MAX_NUMERIC_12_2_CENTS)).toBe('9999999999.99');
  });

  it('throws OrderTotalOutOfRangeError one cent above it', () => {
    expect(() => computeOrderTotal(1, MAX_NUMERIC_12_2_CENTS + 1n)).toThrow(OrderTotalOutOfRangeError);
  });

  it('throws for the largest quantity at the default price, beyond what a double holds exactly', () => {
    expect(() => computeOrderTotal(2_147_483_647, 999n)).toThrow(OrderTotalOutOfRangeError);
  });
});
