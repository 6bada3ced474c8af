import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: reporters(import.meta.dirname),
    // Generous bounds for slow CI machines; nothing here asserts on elapsed time.
    testTimeout: 30_000,
    // Creating a PGlite instance or a fresh PostgreSQL database and migrating it runs in beforeAll.
    hookTimeout: 60_000,
  },
});
