import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Files share a worker's module cache instead of re-importing jose and the package per file
    // (20 s → 4.5 s on the 2-core machine): none mocks a module or stubs the environment, and a new
    // one must not either (as the apps' unit tiers, see vitest.shared.ts).
    isolate: false,
    reporters: reporters(import.meta.dirname),
  },
});
