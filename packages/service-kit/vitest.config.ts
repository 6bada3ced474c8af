import { defineConfig } from 'vitest/config';
import { reporters, testTiers } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    // Unit files share a worker's module cache (no per-file re-import of PGlite, Drizzle and pg):
    // none mocks a module or stubs the environment, and a new one must not either (vitest.shared.ts).
    projects: testTiers({
      // Slow by design: the pool's own tests start PGlite (initdb and WebAssembly) several times,
      // and the pglite://<dir> tests open an on-disk database from child processes (2-3 s each).
      integration: ['test/testing.test.ts', 'test/pglite-directory.test.ts'],
    }),
    reporters: reporters(import.meta.dirname),
    // Starting PGlite (WebAssembly) can take seconds on a busy machine; nothing asserts on time.
    testTimeout: 30_000,
  },
});
