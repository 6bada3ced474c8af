/**
 * Recognises "the database cannot be reached right now" (mapped to 503 temporarily_unavailable)
 * as opposed to a bug in a query (500). Drizzle wraps driver errors, so the cause chain is walked.
 */
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Cannot use a pool after calling end on the pool',
  'Client has encountered a connection error',
  'database did not answer within',
  'PGlite is closed',
];

export function isDatabaseUnavailableError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (UNAVAILABLE_NODE_CODES.has(code)) return true;
      // SQLSTATE class 08 (connection exception), 53 (insufficient resources: too many
      // connections), 57P0x (admin shutdown, crash shutdown, cannot connect now).
      if (/^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    }
    if (
      UNAVAILABLE_MESSAGES.some((message) => current instanceof Error && current.message.includes(message))
    ) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The database could not be opened or migrated at start: one line naming DATABASE_URL. */
export class DatabaseStartError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`DATABASE_URL: ${reason}`, options);
    this.name = 'DatabaseStartError';
  }
}

/** Where the configured database is, without credentials (a connection string may carry a password). */
export function describeDatabaseLocation(
  location: { driver: 'pg'; connectionString: string } | { driver: 'pglite'; dataDir: string | undefined },
): string {
  if (location.driver === 'pglite')
    return location.dataDir ? `PGlite in ${location.dataDir}` : 'in-memory PGlite';
  const url = new URL(location.connectionString);
  return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}
