export type DatabaseLocation =
  | { driver: 'pg'; connectionString: string }
  /** `dataDir` undefined means an in-memory database that disappears with the process. */
  | { driver: 'pglite'; dataDir: string | undefined };

const PGLITE_SCHEME = 'pglite://';

/**
 * `postgres://…` / `postgresql://…` → node-postgres pool; `pglite://memory` → in-memory PGlite;
 * `pglite://<dir>` → PGlite persisted in `<dir>` (relative to the working directory, or absolute as
 * `pglite:///abs/path`). Returns undefined for anything else so the caller can name the variable.
 */
export function parseDatabaseUrl(url: string): DatabaseLocation | undefined {
  if (url.startsWith(PGLITE_SCHEME)) {
    const target = url.slice(PGLITE_SCHEME.length);
    if (target === '') return undefined;
    return { driver: 'pglite', dataDir: target === 'memory' ? undefined : target };
  }
  if (/^postgres(ql)?:\/\//.test(url) && URL.canParse(url)) {
    return { driver: 'pg', connectionString: url };
  }
  return undefined;
}

/** Where the configured database is, without credentials (a connection string may carry a password). */
export function describeDatabaseLocation(location: DatabaseLocation): string {
  if (location.driver === 'pglite')
    return location.dataDir ? `PGlite in ${location.dataDir}` : 'in-memory PGlite';
  const url = new URL(location.connectionString);
  return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}
