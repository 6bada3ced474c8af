import { configDefaults, defineConfig } from 'vitest/config';
import { databaseTier, reporters } from '../vitest.shared.js';
import { suitesMissingPrograms } from './system-requirements.js';

// Never open the test database (pglite://memory or TEST_DATABASE_URL's): always PostgreSQL, on the
// shared server or one of their own, which the first pass already used, or no test database at
// all. Left out of `pnpm test:database` (vitest.shared.ts).
const database = databaseTier([
  'test/backup-restore.test.ts',
  'test/ci-definitions.test.ts',
  'test/database-faults.test.ts',
  'test/dev-admin-commands.test.ts',
  'test/dev-launcher.test.ts',
  'test/dev-recipes.test.ts',
  'test/gateway.test.ts',
  'test/k8s-manifests.test.ts',
  'test/multi-instance.test.ts',
  'test/prometheus.test.ts',
  'test/prometheus-rules.test.ts',
  'test/readme-commands.test.ts',
  'test/rolling-upgrade.test.ts',
  'test/tracing.test.ts',
]);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...suitesMissingPrograms(), ...database.exclude],
    setupFiles: database.setupFiles,
    provide: database.provide,
    // On a machine with only Node.js and npm every suite may be left out (see system-requirements.ts).
    passWithNoTests: true,
    reporters: reporters(import.meta.dirname),
    // Each file starts real processes (auth server, orders, SPAs) and a real Chromium; files run
    // one after the other so two stacks and two browsers never compete for the CPU. Nothing
    // asserts on elapsed time: the bounds are for slow, busy machines.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits for what a page shows after its scripts and the servers answer; a busy
    // machine can take seconds. A wait, not a timing assertion: it returns as soon as it holds.
    expect: { poll: { timeout: 30_000, interval: 100 } },
  },
});
