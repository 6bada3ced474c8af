import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey } from '../src/oidc/keys.js';
import { protectState, unprotectState } from '../src/oidc/state.js';
import { findActiveSession } from '../src/repositories/sessions.js';
import { buildTestApp, testConfig } from './helpers/app.js';
import { countRows } from './helpers/database.js';
import { FAKE_CLIENT_ID } from './helpers/fake-issuer.js';
import { insertTestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * The relying-party routes up to the provider's door, with a stand-in provider: the authorization
 * redirect, return URLs, forwarded headers, the callback's state and correlation checks, `GET /`
 * and logout. The complete sign-in against the real auth server is in signin.e2e.test.ts.
 */

const SESSION_SECRET = 'signin-test-session-secret-0123456789abcdef';
const BASE_URL = 'https://orders.example.test';

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET,
    BASE_URL,
  },
  resetBeforeEach: true,
});

function setCookies(response: { headers: Record<string, unknown> }): string[] {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [String(header)];
}

const sessionCount = () => countRows(fixture.database, 'sessions');

describe('starting a sign-in', () => {
  it('GET / without a session redirects to the authorization endpoint with code, PKCE S256, state, nonce, form_post', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/' });

    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${fixture.issuer.issuer}/authorize`);
    const query = location.searchParams;
    expect(query.get('response_type')).toBe('code');
    expect(query.get('client_id')).toBe(FAKE_CLIENT_ID);
    expect(query.get('redirect_uri')).toBe(`${BASE_URL}/signin-oidc`);
    expect(query.get('response_mode')).toBe('form_post');
    expect(query.get('scope')).toBe('openid profile email offline_access orders.read');
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get('nonce')!.length).toBeGreaterThanOrEqual(32);
    expect(query.get('state')!.split('.')).toHaveLength(5);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('sets a per-attempt correlation cookie: __Host-, Secure, HttpOnly, SameSite=None, Path=/, no Domain', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/' });

    const [correlation, ...others] = setCookies(response);
    expect(others).toEqual([]);
    expect(correlation).toMatch(/^__Host-orders-correlation-[A-Za-z0-9_-]+=[A-Za-z0-9_-]{43};/);
    const attributes = correlation!.split(';').map((part) => part.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=none', 'path=/']));
    expect(attributes.some((attribute) => attribute.startsWith('domain='))).toBe(false);
  });

  it('the state carries the return URL, the code verifier matching the challenge, and the nonce', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/login?returnUrl=%2Forders%3Ftab%3D2' });

    const query = new URL(response.headers.location as string).searchParams;
    const state = await unprotectState(query.get('state')!, deriveKey(SESSION_SECRET, 'sign-in state'));
    expect(state.returnUrl).toBe('/orders?tab=2');
    expect(state.nonce).toBe(query.get('nonce'));
    expect(createHash('sha256').update(state.codeVerifier).digest('base64url')).toBe(
      query.get('code_challenge'),
    );
  });

  it.each([
    '//evil.example',
    'https://evil.example',
    'https:evil.example',
    '/\\evil.example',
    '/%2F%2Fevil.example',
    '/@evil.example',
    '/%5Cevil.example',
  ])('GET /login?returnUrl=%s → 400, no redirect, no cookie', async (returnUrl) => {
    const response = await fixture.app.inject({
      method: 'GET',
      url: `/login?returnUrl=${encodeURIComponent(returnUrl)}`,
    });

    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(setCookies(response)).toEqual([]);
  });
});

describe('forwarded headers', () => {
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example.com' };

  it('without TRUST_PROXY they are ignored: the redirect URI is BASE_URL/signin-oidc', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/', headers: forwarded });

    expect(new URL(response.headers.location as string).searchParams.get('redirect_uri')).toBe(
      `${BASE_URL}/signin-oidc`,
    );
  });

  it('with TRUST_PROXY the redirect URI follows X-Forwarded-Proto/Host (https behind a gateway)', async () => {
    const proxied = await buildTestApp(fixture.database, {
      environment: { ...fixture.environment, BASE_URL: 'http://localhost:3000', TRUST_PROXY: 'true' },
    });
    try {
      const response = await proxied.inject({ method: 'GET', url: '/', headers: forwarded });

      expect(new URL(response.headers.location as string).searchParams.get('redirect_uri')).toBe(
        'https://shop.example.com/signin-oidc',
      );
    } finally {
      await proxied.close();
    }
  });
});

describe('POST /signin-oidc rejects before any token request', () => {
  async function startedSignIn() {
    const response = await fixture.app.inject({ method: 'GET', url: '/' });
    const state = new URL(response.headers.location as string).searchParams.get('state')!;
    const cookie = setCookies(response)[0]!.split(';')[0]!;
    return { state, cookie };
  }

  function callback(form: Record<string, string>, cookie?: string) {
    return fixture.app.inject({
      method: 'POST',
      url: '/signin-oidc',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      payload: new URLSearchParams(form).toString(),
    });
  }

  it('without the correlation cookie: 400 "correlation failed" page, no session', async () => {
    const { state } = await startedSignIn();

    const response = await callback({ code: 'c', state, iss: fixture.issuer.issuer });

    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('correlation failed');
    expect(setCookies(response).some((cookie) => cookie.startsWith('__Host-orders-session='))).toBe(false);
    expect(await sessionCount()).toBe(0);
  });

  it("with another attempt's cookie value: 400 correlation failed", async () => {
    const first = await startedSignIn();
    const second = await startedSignIn();
    const [, secondValue] = second.cookie.split('=');
    const forged = `${first.cookie.split('=')[0]}=${secondValue}`;

    const response = await callback({ code: 'c', state: first.state, iss: fixture.issuer.issuer }, forged);

    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('correlation failed');
  });

  it('with a state protected by another key: 400 "unable to unprotect state", no session', async () => {
    const { cookie } = await startedSignIn();
    const foreignState = await protectState(
      {
        returnUrl: '/',
        codeVerifier: 'v'.repeat(43),
        nonce: 'n',
        correlationId: 'x',
        correlationHash: 'y',
        redirectUri: `${BASE_URL}/signin-oidc`,
      },
      deriveKey('another-instance-secret-0123456789abcdef', 'sign-in state'),
    );

    const response = await callback({ code: 'c', state: foreignState, iss: fixture.issuer.issuer }, cookie);

    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('unable to unprotect state');
    expect(await sessionCount()).toBe(0);
  });

  it('without a state at all: 400 unable to unprotect state', async () => {
    const response = await callback({ code: 'c' });

    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('unable to unprotect state');
  });

  it('an error response from the provider (access_denied): 400 page, the correlation cookie is cleared, no session', async () => {
    const { state, cookie } = await startedSignIn();

    const response = await callback({ error: 'access_denied', state, iss: fixture.issuer.issuer }, cookie);

    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('access_denied');
    expect(setCookies(response).some((value) => value.startsWith(`${cookie.split('=')[0]}=;`))).toBe(true);
    expect(await sessionCount()).toBe(0);
  });
});

describe('GET / and GET /logout with a session', () => {
  it('GET /account ("Your account") redirects to the provider\'s account page, naming this client', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/account' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(
      `${fixture.issuer.issuer.replace(/\/$/, '')}/account?from=${FAKE_CLIENT_ID}`,
    );
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('GET / → {name, sub, hasAccessToken}', async () => {
    const { cookie } = await insertTestSession(fixture.database, testConfig(fixture.environment), {
      tokens: { idToken: 'id-token', accessToken: 'at' },
    });

    const response = await fixture.app.inject({ method: 'GET', url: '/', headers: { cookie } });

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ name: 'Alice Example', sub: 'u-alice', hasAccessToken: true });
  });

  it('GET /logout deletes the session and cookie, revokes the refresh token, redirects to end_session', async () => {
    const refreshToken = fixture.issuer.issueRefreshToken();
    const session = await insertTestSession(fixture.database, testConfig(fixture.environment), {
      tokens: { idToken: 'the-id-token', accessToken: 'at', refreshToken },
    });

    const response = await fixture.app.inject({
      method: 'GET',
      url: '/logout',
      headers: { cookie: session.cookie },
    });

    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${fixture.issuer.issuer}/logout`);
    expect(location.searchParams.get('id_token_hint')).toBe('the-id-token');
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${BASE_URL}/signed-out`);
    expect(fixture.issuer.revoked()).toContain(refreshToken);
    expect(await findActiveSession(fixture.database.handle.db, session.id, new Date())).toBeUndefined();
    const cleared = setCookies(response).find((value) => value.startsWith('__Host-orders-session='));
    expect(cleared).toMatch(/^__Host-orders-session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/i);
  });

  it('GET /logout without a session still sends the browser to end_session (with client_id)', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/logout' });

    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(location.searchParams.get('client_id')).toBe(FAKE_CLIENT_ID);
    expect(location.searchParams.get('id_token_hint')).toBeNull();
  });
});
