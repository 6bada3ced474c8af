import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveKey } from '../src/oidc/keys.js';
import { unprotectState } from '../src/oidc/state.js';
import { testConfig } from './helpers/app.js';
import { insertTestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * Open redirects: no route of this service sends a browser anywhere but this service's own paths
 * or the provider's registered endpoints. `returnUrl` is the one redirect target a caller chooses;
 * it is checked at `GET /login` and carried in the encrypted `state`, so what `/signin-oidc`
 * redirects to is exactly what passed the check. (Unit table of the rule: return-url.test.ts.)
 */

const SESSION_SECRET = 'open-redirect-test-session-secret-0123456789';
const BASE_URL = 'https://orders.example.test';

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET,
    BASE_URL,
  },
});

/** Where `GET /login?returnUrl=…` would send the browser after sign-in, or `null` when refused. */
async function returnTargetOf(returnUrl: string): Promise<URL | null> {
  const response = await fixture.app.inject({
    method: 'GET',
    url: `/login?returnUrl=${encodeURIComponent(returnUrl)}`,
  });
  if (response.statusCode === 400) {
    expect(response.headers.location).toBeUndefined();
    return null;
  }
  expect(response.statusCode).toBe(302);
  const location = new URL(response.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(`${fixture.issuer.issuer}/authorize`);
  expect(location.searchParams.get('redirect_uri')).toBe(`${BASE_URL}/signin-oidc`);
  const state = await unprotectState(
    location.searchParams.get('state')!,
    deriveKey(SESSION_SECRET, 'sign-in state'),
  );
  // A browser resolves the 303 Location of /signin-oidc against this service's URL.
  return new URL(state.returnUrl, `${BASE_URL}/signin-oidc`);
}

const TRICKS: Array<[string, string]> = [
  ['scheme-relative', '//evil.example'],
  ['scheme-relative with a path', '//evil.example/orders'],
  ['three slashes', '///evil.example'],
  ['absolute', 'https://evil.example/orders'],
  ['scheme without slashes', 'https:evil.example'],
  ['javascript', 'javascript:alert(1)'],
  ['data', 'data:text/html,<script>alert(1)</script>'],
  ['backslash', '/\\evil.example'],
  ['backslashes', '\\\\evil.example'],
  ['slash backslash mix', '/\\/evil.example'],
  ['encoded slashes', '/%2F%2Fevil.example'],
  ['encoded backslash', '/%5Cevil.example'],
  ['double-encoded slashes', '/%252F%252Fevil.example'],
  ['encoded dots to the root', '/%2e%2e/%2e%2e//evil.example'],
  ['encoded dots and slash', '/%2e%2e%2f%2e%2e%2f%2fevil.example'],
  ['userinfo', '/@evil.example'],
  ['userinfo after the origin', `${BASE_URL}@evil.example`],
  ['encoded at sign', '/%40evil.example'],
  ['our origin as a prefix', `${BASE_URL}.evil.example/orders`],
  ['tab', '/\t/evil.example'],
  ['newline (header splitting)', '/\r\nLocation: https://evil.example'],
  ['encoded newline', '/%0d%0aLocation:%20https://evil.example'],
];

describe('GET /login returnUrl', () => {
  it.each(TRICKS)('%s (%j): refused, or kept on this origin', async (_name, returnUrl) => {
    const target = await returnTargetOf(returnUrl);
    if (target !== null) expect(target.origin).toBe(BASE_URL);
  });

  it('the usual tricks are refused outright (400, no Location, no cookie)', async () => {
    for (const returnUrl of ['//evil.example', 'https:evil.example', '/\\evil.example', '/@evil.example']) {
      const response = await fixture.app.inject({
        method: 'GET',
        url: `/login?returnUrl=${encodeURIComponent(returnUrl)}`,
      });
      expect(response.statusCode).toBe(400);
      expect(response.headers.location).toBeUndefined();
      expect(response.headers['set-cookie']).toBeUndefined();
    }
  });

  it('a local path is kept as given', async () => {
    expect((await returnTargetOf('/orders?tab=2#top'))?.href).toBe(`${BASE_URL}/orders?tab=2#top`);
  });

  it('property: for any string, /login refuses it or the sign-in returns to this origin', async () => {
    const trickyUnits = fc.constantFrom(
      '/',
      '\\',
      '@',
      '.',
      '%',
      '2',
      'f',
      'F',
      '5',
      'c',
      'e',
      ':',
      '?',
      '#',
      '\t',
      'a',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: trickyUnits, maxLength: 24 })),
        async (returnUrl) => {
          const target = await returnTargetOf(returnUrl);
          if (target !== null && target.origin !== BASE_URL) {
            throw new Error(`returnUrl ${JSON.stringify(returnUrl)} leads to ${target.href}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('redirects that take no target from the caller', () => {
  const forgedHost = {
    host: 'evil.example',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'http',
  };

  it('GET / without a session goes to the provider with BASE_URL/signin-oidc, whatever Host says', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/', headers: forgedHost });
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(location.origin).toBe(new URL(fixture.issuer.issuer).origin);
    expect(location.searchParams.get('redirect_uri')).toBe(`${BASE_URL}/signin-oidc`);
  });

  it('GET /logout goes to the provider with post_logout_redirect_uri BASE_URL/signed-out, whatever Host says', async () => {
    const session = await insertTestSession(fixture.database, testConfig(fixture.environment), {
      tokens: { idToken: 'header.payload.signature' },
    });
    const response = await fixture.app.inject({
      method: 'GET',
      url: '/logout?post_logout_redirect_uri=https://evil.example&returnUrl=//evil.example',
      headers: { ...forgedHost, cookie: session.cookie },
    });
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${fixture.issuer.issuer}/logout`);
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${BASE_URL}/signed-out`);
    expect(response.headers.location).not.toContain('evil.example');
  });
});
