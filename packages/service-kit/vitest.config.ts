import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Files share a worker's module cache (no per-file re-import of PGlite, Drizzle and pg): none
    // mocks a module or stubs the environment, and a new one must not either (see vitest.shared.ts).
    isolate: false,
    reporters: reporters(import.meta.dirname),
    // Starting PGlite (WebAssembly) can take seconds on a busy machine; nothing asserts on time.
    testTimeout: 30_000,
  },
});
