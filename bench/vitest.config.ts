import { defineConfig } from 'vitest/config';
import { reporters } from '../vitest.shared.js';

// Unit tests of the harness's pure parts, and the oidc-provider peer's Redis store and the peer
// itself against a redis-server each test starts on its own port (seconds, loopback only). The
// benchmarks themselves are scripts (`pnpm bench`), never timed assertions in tests.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Pure functions: files share a worker's module cache (none mocks a module or stubs the environment).
    isolate: false,
    reporters: reporters(import.meta.dirname),
  },
});
