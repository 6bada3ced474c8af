import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, type TestProjectInlineConfiguration } from 'vitest/config';

const repositoryRoot = dirname(fileURLToPath(import.meta.url));

/**
 * Reporters shared by every package's vitest.config.ts: the default console output, plus a JSON
 * report per package and database (PGlite or PostgreSQL) that scripts/test-summary.mjs adds up.
 */
export function reporters(packageDir: string): Array<string | [string, { outputFile: string }]> {
  const database = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';
  const outputFile = join(repositoryRoot, '.vitest-results', `${basename(packageDir)}-${database}.json`);
  return ['default', ['json', { outputFile }]];
}

/**
 * `pnpm test:database` runs only the database tier: pnpm passes the name of the script it runs as
 * npm_lifecycle_event, so each package's `test:database` script is a plain `vitest run`.
 */
export const databaseTierOnly = process.env.npm_lifecycle_event === 'test:database';

const databaseTierSetup = join(repositoryRoot, 'packages/service-kit/src/testing/database-tier-setup.ts');

/**
 * The database tier: every test file but `withoutDatabase`, the files that never open the test
 * database (PGlite, or PostgreSQL with TEST_DATABASE_URL) and so behave the same on both. CI runs
 * every file once on PGlite, then the database tier again on PostgreSQL. A file is in the tier
 * unless listed, so a new one cannot miss the PostgreSQL pass, and a listed file that opens the
 * test database fails (the setup file tells the test kit which files are listed). A file that
 * always uses PostgreSQL, whatever TEST_DATABASE_URL says, already ran on it and may be listed.
 */
export function databaseTier(withoutDatabase: string[]) {
  return {
    setupFiles: [databaseTierSetup],
    provide: { testFilesWithoutDatabase: withoutDatabase },
    /** What `pnpm test:database` leaves out: add to `exclude`. */
    exclude: databaseTierOnly ? withoutDatabase : [],
  };
}

/** Test files of a package by tier; a file named in neither list is a unit test. */
export interface TestTiers {
  /**
   * Real listeners (the app or a counterpart on a port), child processes, PostgreSQL-only paths, and
   * files slow by design (hundreds of random requests, statistics over timed sign-ins, PGlite
   * started several times): the unit tier is the loop run on every change and stays under a minute.
   */
  integration?: string[];
  /** Spawned stacks, Chromium, nginx, a KDC. */
  e2e?: string[];
  /** Files of any tier that never open the test database: left out of `pnpm test:database` (see databaseTier). */
  withoutDatabase?: string[];
}

/**
 * The three tiers as vitest projects: `vitest run --project unit` is the fast
 * loop (pure functions and `app.inject` on in-process PGlite), `--project integration` and
 * `--project e2e` the slow ones; plain `vitest run` (what `pnpm test` runs) runs all three, so no
 * file is left out. Every file under test/ not listed as integration or e2e is unit.
 */
export function testTiers({
  integration = [],
  e2e = [],
  withoutDatabase = [],
}: TestTiers): TestProjectInlineConfiguration[] {
  const database = databaseTier(withoutDatabase);
  const tier = (
    name: string,
    include: string[],
    exclude: string[] = [],
    extra: { isolate?: boolean } = {},
  ): TestProjectInlineConfiguration => ({
    extends: true,
    test: {
      name,
      include,
      exclude: [...configDefaults.exclude, ...exclude, ...database.exclude],
      setupFiles: database.setupFiles,
      provide: database.provide,
      ...extra,
    },
  });
  return [
    // Unit files share a worker's module cache (no per-file re-import of Fastify, Drizzle and
    // PGlite's WebAssembly): each builds its own app and database, none mocks a module or stubs the
    // environment. On the 2-core machine this took the orders unit tier from 188 s to 110 s.
    tier('unit', ['test/**/*.test.ts'], [...integration, ...e2e], { isolate: false }),
    ...(integration.length > 0 ? [tier('integration', integration)] : []),
    ...(e2e.length > 0 ? [tier('e2e', e2e)] : []),
  ];
}
