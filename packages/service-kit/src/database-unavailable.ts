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
 * Whether `error` (or something in its `cause` chain: Drizzle wraps driver errors, or in an
 * AggregateError's `errors`) says the database is unreachable: refused or reset connections, the
 * pool's connect timeout, SQLSTATE class 08 (connection exception), 53 (insufficient resources,
 * e.g. too many connections) and 57P01–57P03 (admin shutdown, crash shutdown, cannot connect now).
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
    if (typeof code === 'string' && isUnreachableCode(code)) return true;
    if (typeof message === 'string' && UNREACHABLE_MESSAGES.some((text) => message.includes(text))) {
      return true;
    }
    // `connect ECONNREFUSED` for a host with several addresses (IPv4 and IPv6) arrives as an AggregateError.
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = cause;
  }
  return false;
}

function isUnreachableCode(code: string): boolean {
  return UNREACHABLE_CODES.has(code) || /^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code);
}
