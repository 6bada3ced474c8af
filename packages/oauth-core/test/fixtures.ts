import type { Client, Resource, User } from '../src/model.js';
import { createSecretHasher } from '../src/secrets.js';

export const secrets = createSecretHasher(new Uint8Array(32).fill(7));

export const ISSUER = 'https://auth.example.test';

export function makeClient(overrides: Partial<Client> = {}): Client {
  return {
    clientId: 'web',
    clientName: 'Web',
    secretHash: secrets.hash('web-secret'),
    redirectUris: ['https://app.example.test/cb'],
    postLogoutRedirectUris: [],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'orders.read', 'orders.write', 'billing.read'],
    skipConsent: true,
    idTokenSigningAlg: 'RS256',
    allowedCorsOrigins: [],
    backchannelLogoutUri: null,
    frontchannelLogoutUri: null,
    refreshTokensWithoutOfflineAccess: false,
    refreshTokenAbsoluteTtl: 30 * 24 * 3600,
    refreshTokenSlidingTtl: 14 * 24 * 3600,
    ...overrides,
  };
}

export const publicClient = (overrides: Partial<Client> = {}): Client =>
  makeClient({ clientId: 'spa', clientName: 'SPA', secretHash: null, ...overrides });

export const serviceClient = (overrides: Partial<Client> = {}): Client =>
  makeClient({
    clientId: 'svc',
    clientName: 'Service',
    secretHash: secrets.hash('svc-secret'),
    redirectUris: [],
    grantTypes: ['client_credentials'],
    scopes: ['orders.read', 'orders.write', 'billing.read'],
    ...overrides,
  });

export function makeResource(overrides: Partial<Resource> = {}): Resource {
  return {
    id: 'orders-api',
    scopes: ['orders.read', 'orders.write'],
    accessTokenFormat: 'jwt',
    accessTokenTtl: 300,
    accessTokenSigningAlg: 'RS256',
    secretHash: secrets.hash('orders-secret'),
    claims: ['email'],
    ...overrides,
  };
}

export const billingResource = (overrides: Partial<Resource> = {}): Resource =>
  makeResource({
    id: 'billing-api',
    scopes: ['billing.read'],
    accessTokenFormat: 'opaque',
    accessTokenTtl: 600,
    secretHash: secrets.hash('billing-secret'),
    claims: ['name'],
    ...overrides,
  });

export function makeUser(overrides: Partial<User> = {}): User {
  return {
    sub: 'u-alice',
    username: 'alice',
    passwordHash: 'scrypt$unused',
    name: 'Alice Example',
    email: 'alice@example.com',
    emailVerified: true,
    allowedScopes: null,
    ...overrides,
  };
}
