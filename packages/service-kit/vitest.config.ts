import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: reporters(import.meta.dirname),
    // Starting PGlite (WebAssembly) can take seconds on a busy machine; nothing asserts on time.
    testTimeout: 30_000,
  },
});
