import { defineConfig } from 'vitest/config';
import { reporters, testTiers } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    projects: testTiers({
      integration: ['test/slow-down.test.ts', 'test/install-line.test.ts'],
      // The auth server and the orders service spawned, the CLI run as a process.
      e2e: ['test/cli.e2e.test.ts', 'test/orders-service.e2e.test.ts'],
      // Never open the test database: left out of test:database.
      withoutDatabase: ['test/run.test.ts', 'test/install-line.test.ts'],
    }),
    reporters: reporters(import.meta.dirname),
    // Each file starts its own auth server process (PGlite in memory, or its own PostgreSQL
    // database). Nothing asserts on elapsed time; the bounds are for slow machines.
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
