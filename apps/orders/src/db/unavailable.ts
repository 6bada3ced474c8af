import { DatabaseUnavailableError } from '../errors.js';

/** Node socket errors that mean "the database cannot be reached right now". */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);

/** node-postgres / PGlite messages for a connection that failed, timed out or was cut. */
const UNREACHABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end on the pool',
  'PGlite is closed',
];

const MAX_CAUSE_DEPTH = 6;

/**
 * Whether `error` (or something in its `cause` chain: Drizzle wraps driver errors) says the
 * database is unreachable: refused or reset connections, the pool's connect timeout
 * (DATABASE_CONNECT_TIMEOUT_MS), SQLSTATE class 08 (connection exception), 53 (insufficient
 * resources, e.g. too many connections) and 57P01–57P03 (admin shutdown, crash shutdown, cannot
 * connect now). Those are answered 503 rather than 500: an outage, not a bug.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof DatabaseUnavailableError) return true;
    const { code, message, cause, errors } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string') {
      if (UNREACHABLE_CODES.has(code)) return true;
      if (/^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    }
    if (typeof message === 'string' && UNREACHABLE_MESSAGES.some((text) => message.includes(text))) {
      return true;
    }
    // `connect ECONNREFUSED` for a host with several addresses arrives as an AggregateError.
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = cause;
  }
  return false;
}
