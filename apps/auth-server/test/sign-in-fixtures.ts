import { createHash, randomBytes } from 'node:crypto';
import type { SeedDocument } from '../src/schemas/seed.js';
import { startTestApp, type TestAppOptions } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

/** Clients and users the sign-in tests add to the shared test seed. Test-only values. */
export const CONSENTING = {
  clientId: 'consenting',
  clientName: 'Consenting <App>',
  secret: 'consenting-secret-for-tests-0123456789',
  redirectUri: 'https://consenting.example.test/callback',
  postLogoutRedirectUri: 'https://consenting.example.test/signed-out',
} as const;

export const ALICE = { sub: 'u-alice', username: 'alice', password: 'alice-password-for-tests' } as const;
export const BOB = { sub: 'u-bob', username: 'bob', password: 'bob-password-for-tests' } as const;

export function signInSeed(): SeedDocument {
  const seed = testSeed();
  return {
    ...seed,
    clients: [
      ...(seed.clients ?? []),
      {
        client_id: CONSENTING.clientId,
        client_name: CONSENTING.clientName,
        client_secret: CONSENTING.secret,
        redirect_uris: [CONSENTING.redirectUri],
        post_logout_redirect_uris: [CONSENTING.postLogoutRedirectUri],
        grant_types: ['authorization_code'],
        scope: 'openid profile email orders.read',
      },
    ],
    users: [
      ...(seed.users ?? []),
      // Restricted by the seed: granted scopes = requested ∩ client's ∩ these.
      {
        sub: BOB.sub,
        username: BOB.username,
        password: BOB.password,
        name: 'Bob',
        allowed_scopes: ['openid', 'profile'],
      },
    ],
  };
}

export function startSignInApp(options: TestAppOptions = {}) {
  return startTestApp({ seed: signInSeed(), ...options });
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

export function authorizePath(params: Record<string, string>): string {
  return `/authorize?${new URLSearchParams(params).toString()}`;
}
