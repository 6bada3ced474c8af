import { defineConfig } from 'vitest/config';
import { reporters, testTiers } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    projects: testTiers({
      // Child processes (server.ts, a stub issuer) or real listeners.
      integration: [
        'test/server.process.test.ts',
        'test/oidc-availability.test.ts',
        'test/property.test.ts',
        'test/database.test.ts',
        // Slow by design: fresh key pairs (RSA among them) and signed proofs per case, openid-client as caller.
        'test/dpop.test.ts',
      ],
      // The auth server spawned and Chromium driving the sign-in.
      e2e: [
        'test/signin.e2e.test.ts',
        'test/opaque-tokens.e2e.test.ts',
        'test/account-lifecycle.e2e.test.ts',
        // The auth server spawned; the MCP SDK's client and openid-client sign in over plain HTTP.
        'test/mcp-client.e2e.test.ts',
      ],
      // Never open the test database: left out of test:database.
      withoutDatabase: [
        'test/config.test.ts',
        'test/database-unavailable.test.ts',
        'test/error-handler.test.ts',
        'test/logging.test.ts',
        'test/pricing.test.ts',
        'test/return-url.test.ts',
        'test/state.test.ts',
        'test/verified-token-cache.test.ts',
      ],
    }),
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: reporters(import.meta.dirname),
    // Generous bounds for slow CI machines; nothing here asserts on elapsed time.
    testTimeout: 30_000,
    // Creating a PGlite instance or a fresh PostgreSQL database and migrating it runs in beforeAll.
    hookTimeout: 60_000,
  },
});
