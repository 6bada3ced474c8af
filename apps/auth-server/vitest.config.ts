import { defineConfig } from 'vitest/config';
import { reporters, testTiers } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    projects: testTiers({
      // Real listeners (the app on a port, a JWKS or logout receiver) or child processes (CLI, server).
      integration: [
        'test/dpop.test.ts',
        'test/logout.test.ts',
        'test/par.test.ts',
        'test/private-key-jwt.test.ts',
        'test/sign-in-protocol.test.ts',
        'test/fapi2.e2e.test.ts',
        'test/jarm.e2e.test.ts',
        'test/openid-client.e2e.test.ts',
        // openid-client against the listening app, a back-channel logout receiver.
        'test/admin-api.test.ts',
        // The OpenID Dynamic OP plan's modules: a listening app and a loopback jwks_uri listener.
        'test/dynamic-op-plan.e2e.test.ts',
        'test/request-uri.e2e.test.ts',
        'test/server-signed-jwts.e2e.test.ts',
        'test/loopback-redirect.e2e.test.ts',
        'test/token-exchange-grant-lifetime.e2e.test.ts',
        'test/audit.test.ts',
        'test/key-rotation-jwks.test.ts',
        'test/first-run-config.test.ts',
        'test/startup.test.ts',
        // esbuild in a child process, twice (both apps' bundles).
        'test/server-bundle.test.ts',
        'test/users-cli.test.ts',
        'test/clients-cli.test.ts',
        'test/seed-plan-cli.test.ts',
        // A loopback listener serving Client ID Metadata Documents.
        'test/client-metadata-documents.test.ts',
        'test/admin-commands-database.test.ts',
        // Slow by design: 120 random requests per route; means of sign-ins at the production scrypt cost.
        'test/property.test.ts',
        'test/login-timing.test.ts',
        // A real SMTP server on a loopback port; statistical timing over many requests.
        'test/mail-transport.test.ts',
        'test/password-reset.test.ts',
        'test/password-reset-instances.test.ts',
        'test/users-send-reset.test.ts',
        'test/security-notices.test.ts',
        // The reset mail in the user's language, from the real SMTP server.
        'test/languages.test.ts',
        'test/email-verification.test.ts',
        // A real OpenLDAP (slapd) per file.
        'test/directory-ldap.test.ts',
        'test/directory-sign-in.test.ts',
        'test/directory-slapd-fixture.test.ts',
        // A real upstream OpenID provider (oidc-provider) on a loopback port, and our app listening.
        'test/federation.test.ts',
        'test/federation-account-link.test.ts',
        'test/federation-mail-link.test.ts',
        'test/federation-claims.test.ts',
        'test/account-mail-ownership.test.ts',
        // The same in Chromium (Debian's chromium through playwright-core).
        'test/federation-browser.test.ts',
      ],
      // A real KDC (krb5kdc) and kinit.
      e2e: ['test/kerberos.test.ts'],
      // Never open the test database: no database, one of their own (pglite://memory or a folder, in a
      // child process too), or always PostgreSQL (coalesced-lookups-plans): left out of test:database.
      withoutDatabase: [
        'test/admin-commands-database.test.ts',
        'test/backchannel-sender.test.ts',
        'test/coalesced-lookups-plans.test.ts',
        'test/coalescer.test.ts',
        'test/cli-stdin.test.ts',
        'test/common-passwords.test.ts',
        'test/config.test.ts',
        'test/directory-ldap.test.ts',
        'test/directory-slapd-fixture.test.ts',
        'test/federation-claim-rules.test.ts',
        'test/import-cycles.test.ts',
        'test/interaction-logic.test.ts',
        'test/pages.test.ts',
        'test/production-dependencies.test.ts',
        'test/seed-file.test.ts',
        'test/server-bundle.test.ts',
        'test/sign-in-methods.test.ts',
        'test/startup.test.ts',
        'test/user-agent.test.ts',
      ],
    }),
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: reporters(import.meta.dirname),
    // Each file builds its own app (PGlite in memory, or its own PostgreSQL database): independent.
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
