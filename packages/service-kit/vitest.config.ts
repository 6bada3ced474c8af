import { defineConfig } from 'vitest/config';
import { reporters, testTiers } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    // Unit files share a worker's module cache (no per-file re-import of PGlite, Drizzle and pg):
    // none mocks a module or stubs the environment, and a new one must not either (vitest.shared.ts).
    projects: testTiers({
      // Slow by design: the pool's own tests start PGlite (initdb and WebAssembly) several times,
      // and the pglite://<dir> tests open an on-disk database from child processes (2-3 s each).
      // migration-plan: on-disk PGlite databases opened and migrated again and again (6 s of a 9 s tier).
      integration: ['test/testing.test.ts', 'test/pglite-directory.test.ts', 'test/migration-plan.test.ts'],
      // Their PGlite databases are their own (in memory or on disk), whatever TEST_DATABASE_URL says.
      withoutDatabase: [
        'test/database-unavailable.test.ts',
        'test/database-tier.test.ts',
        'test/database.test.ts',
        'test/free-port.test.ts',
        'test/graceful-shutdown.test.ts',
        'test/logging.test.ts',
        'test/migration-plan.test.ts',
        'test/pglite-directory.test.ts',
        'test/secret-files.test.ts',
        'test/span-scrubbing.test.ts',
        'test/system-programs.test.ts',
        'test/tracing-off.test.ts',
        'test/trust-proxy.test.ts',
      ],
    }),
    reporters: reporters(import.meta.dirname),
    // Starting PGlite (WebAssembly) can take seconds on a busy machine; nothing asserts on time.
    testTimeout: 30_000,
  },
});
