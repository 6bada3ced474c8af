import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: reporters(import.meta.dirname),
    // Each file starts its own auth server process (PGlite in memory, or its own PostgreSQL
    // database). Nothing asserts on elapsed time; the bounds are for slow machines.
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
