import type { ScryptCost } from '@oidc-orders/oauth-core';
import type { SeedClient, SeedDocument } from '../../src/schemas/seed.js';

/** Secrets used by the test seed. Test-only values. */
export const TEST_SECRETS = {
  service: 'service-secret-for-tests-0123456789',
  web: 'web-secret-for-tests-0123456789abcdef',
  ordersApi: 'orders-api-secret-for-tests-01234567',
  reportsApi: 'reports-api-secret-for-tests-0123456',
  alicePassword: 'alice-password-for-tests',
} as const;

/**
 * scrypt cost for the test seeds' plain-text passwords: 1/32 of production's, so seeding and each
 * sign-in take milliseconds instead of ~0.1 s of CPU. Tests about password storage and timing
 * (login-timing.test.ts) start with the production cost (`seedPasswordCost: 'production'`).
 */
export const TEST_PASSWORD_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

export const ORDERS_API = 'https://api.example.test/orders';
export const REPORTS_API = 'https://api.example.test/reports';
export const SPA_ORIGIN = 'https://spa.example.test';
export const WEB_REDIRECT_URI = 'https://web.example.test/callback';
export const SPA_REDIRECT_URI = 'https://spa.example.test/callback';

/**
 * - `service`: confidential, client_credentials only.
 * - `web`: confidential, authorization_code + refresh_token (ID tokens ES256 to exercise both algs).
 * - `spa`: public, authorization_code + refresh_token, with a CORS origin.
 * - `orders-api` (JWT access tokens) and `reports-api` (opaque), both able to introspect.
 */
export function testSeed(): SeedDocument {
  return {
    clients: [
      {
        client_id: 'service',
        client_secret: TEST_SECRETS.service,
        grant_types: ['client_credentials'],
        scope: 'orders.read orders.write reports.read',
      },
      {
        client_id: 'web',
        client_name: 'Web app',
        client_secret: TEST_SECRETS.web,
        redirect_uris: [WEB_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read reports.read',
        skip_consent: true,
        allowed_cors_origins: ['https://confidential.example.test'],
      },
      {
        client_id: 'spa',
        redirect_uris: [SPA_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile offline_access orders.read',
        skip_consent: true,
        allowed_cors_origins: [SPA_ORIGIN],
      },
    ],
    resources: [
      {
        id: ORDERS_API,
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: 300,
        secret: TEST_SECRETS.ordersApi,
        claims: ['email'],
      },
      {
        id: REPORTS_API,
        scopes: ['reports.read'],
        access_token_format: 'opaque',
        secret: TEST_SECRETS.reportsApi,
      },
    ],
    users: [
      {
        sub: 'u-alice',
        username: 'alice',
        password: TEST_SECRETS.alicePassword,
        name: 'Alice Example',
        email: 'alice@example.test',
        email_verified: true,
      },
    ],
  };
}

/** A confidential client that requires a second factor (`require_mfa`), for the MFA suites. */
export const REQUIRE_MFA_CLIENT = {
  clientId: 'strict',
  secret: 'strict-secret-for-tests-0123456789ab',
  redirectUri: 'https://strict.example.test/cb',
} as const;

export function requireMfaClientEntry(): SeedClient {
  return {
    client_id: REQUIRE_MFA_CLIENT.clientId,
    client_secret: REQUIRE_MFA_CLIENT.secret,
    redirect_uris: [REQUIRE_MFA_CLIENT.redirectUri],
    grant_types: ['authorization_code'],
    scope: 'openid profile',
    skip_consent: true,
    require_mfa: true,
  };
}
