/**
 * The database tier of the test suites. A test file that opens the test database (PGlite, or a
 * fresh PostgreSQL database when TEST_DATABASE_URL is set) runs twice in CI, once on each; a file
 * that never does behaves the same in both passes and runs once. Every file is in the database tier
 * unless its package's vitest.config.ts lists it under `withoutDatabase` (vitest.shared.ts), so a
 * new file cannot slip out of the PostgreSQL pass; a listed file that opens the test database
 * fails here, on the PGlite pass that runs every file.
 */

/** A global, not a module variable: the setup file and the test code may load this module twice. */
const LISTED_FILE = Symbol.for('oidc-orders.test-file-listed-without-database');
type Marked = { [LISTED_FILE]?: string | undefined };

/** Called before each test file (database-tier-setup.ts): the file, when its package lists it as without database. */
export function markTestFileWithoutDatabase(file: string | undefined): void {
  (globalThis as Marked)[LISTED_FILE] = file;
}

/** The error a listed file gets when it opens the test database (also for a file that reads TEST_DATABASE_URL). */
export function listedWithoutDatabaseError(file: string, what: string): Error {
  return new Error(
    `${file} ${what}, but its package's vitest.config.ts lists it under withoutDatabase, so the ` +
      'PostgreSQL pass (pnpm test:database) would leave it out: remove it from that list',
  );
}

/** Throws when the running test file is listed as never opening the test database. */
export function assertTestFileMayOpenDatabase(): void {
  const file = (globalThis as Marked)[LISTED_FILE];
  if (file !== undefined) {
    throw listedWithoutDatabaseError(
      file,
      'opens the test database (PGlite, or PostgreSQL with TEST_DATABASE_URL)',
    );
  }
}
