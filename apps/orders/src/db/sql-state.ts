/** SQLSTATE 23505 unique_violation. */
export const UNIQUE_VIOLATION = '23505';
/** SQLSTATE 22003 numeric_value_out_of_range. */
export const NUMERIC_VALUE_OUT_OF_RANGE = '22003';

export interface DatabaseErrorDetails {
  sqlState: string;
  constraint: string | undefined;
}

// Five characters with at least one digit: keeps Node errno codes such as EPIPE out.
const SQLSTATE = /^(?=.*[0-9])[0-9A-Z]{5}$/;
const MAX_CAUSE_DEPTH = 5;

/**
 * The PostgreSQL error behind `error`. Drizzle wraps driver errors in DrizzleQueryError with the
 * driver's error (pg's DatabaseError, PGlite's error) as `cause`, so the SQLSTATE can be on the
 * error itself or a few `cause` links down. Both drivers expose it as `code` and the violated
 * constraint as `constraint`.
 */
export function findDatabaseError(error: unknown): DatabaseErrorDetails | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const { code, constraint, cause } = current as { code?: unknown; constraint?: unknown; cause?: unknown };
    if (typeof code === 'string' && SQLSTATE.test(code)) {
      return { sqlState: code, constraint: typeof constraint === 'string' ? constraint : undefined };
    }
    current = cause;
  }
  return undefined;
}

export function findSqlState(error: unknown): string | undefined {
  return findDatabaseError(error)?.sqlState;
}
