import { describe, expect, it } from 'vitest';
import { findActiveSession } from '../src/repositories/sessions.js';
import { testConfig } from './helpers/app.js';
import { insertTestSession, type TestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * A sign-out another site asks for is a question, not a sign-out. Same-site
 * navigations (and clients without fetch metadata) still sign out at GET /logout; the question's
 * button and the /app button POST with a CSRF token bound to the session.
 */

const BASE_URL = 'https://orders.example.test';

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET: 'sign-out-test-session-secret-0123456789abcdef',
    BASE_URL,
  },
  resetBeforeEach: true,
});

async function signedIn(): Promise<TestSession & { refreshToken: string }> {
  const refreshToken = fixture.issuer.issueRefreshToken();
  const session = await insertTestSession(fixture.database, testConfig(fixture.environment), {
    tokens: { idToken: 'the-id-token', accessToken: 'at', refreshToken },
  });
  return { ...session, refreshToken };
}

const stillSignedIn = async (session: TestSession) =>
  (await findActiveSession(fixture.database.handle.db, session.id, new Date())) !== undefined;

function getLogout(session: TestSession, headers: Record<string, string> = {}) {
  return fixture.app.inject({
    method: 'GET',
    url: '/logout',
    headers: { cookie: session.cookie, ...headers },
  });
}

function postLogout(session: TestSession, form: string, headers: Record<string, string> = {}) {
  return fixture.app.inject({
    method: 'POST',
    url: '/logout',
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form,
  });
}

/** The hidden CSRF field of the confirmation page. */
function csrfOf(html: string): string {
  const match = /<input type="hidden" name="csrf" value="([^"]+)">/.exec(html);
  expect(match).not.toBeNull();
  return match![1]!;
}

describe('GET /logout from another site', () => {
  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['an Origin of another site (no fetch metadata)', { origin: 'https://evil.example' }],
    ['a Referer of another site (no fetch metadata)', { referer: 'https://evil.example/page' }],
    ['Origin: null (an opaque origin)', { origin: 'null' }],
  ])('%s: a confirmation page, nothing ended, nothing revoked', async (_case, headers) => {
    const session = await signedIn();

    const response = await getLogout(session, headers);

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['content-security-policy']).toContain(
      `form-action 'self' ${fixture.issuer.issuer}`,
    );
    expect(response.body).toMatch(new RegExp(`<form method="post" action="${BASE_URL}/logout">`));
    csrfOf(response.body);
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(await stillSignedIn(session)).toBe(true);
    expect(fixture.issuer.revoked()).not.toContain(session.refreshToken);
  });

  it("the page's button (POST with its CSRF token) signs out and goes to the provider", async () => {
    const session = await signedIn();
    const page = await getLogout(session, { 'sec-fetch-site': 'cross-site' });

    const response = await postLogout(session, `csrf=${encodeURIComponent(csrfOf(page.body))}`, {
      'sec-fetch-site': 'same-origin',
    });

    expect(response.statusCode).toBe(303);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${fixture.issuer.issuer}/logout`);
    expect(location.searchParams.get('id_token_hint')).toBe('the-id-token');
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${BASE_URL}/signed-out`);
    expect(await stillSignedIn(session)).toBe(false);
    expect(fixture.issuer.revoked()).toContain(session.refreshToken);
  });
});

describe('GET /logout from this site, or without fetch metadata', () => {
  it.each([
    ['Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['Sec-Fetch-Site: none (typed URL, bookmark)', { 'sec-fetch-site': 'none' }],
    ['an Origin of this app', { origin: BASE_URL }],
    ['a Referer of this app', { referer: `${BASE_URL}/fixture.app` }],
    ['no fetch metadata at all', {}],
  ])('%s: signs out at once (RP-Initiated Logout)', async (_case, headers) => {
    const session = await signedIn();

    const response = await getLogout(session, headers);

    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${fixture.issuer.issuer}/logout`);
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${BASE_URL}/signed-out`);
    expect(await stillSignedIn(session)).toBe(false);
  });
});

describe('POST /logout', () => {
  it.each([
    ['without a CSRF token', ''],
    ['with a wrong CSRF token', 'csrf=not-the-token'],
    ['with an empty CSRF token', 'csrf='],
  ])('%s: 403, nothing ended', async (_case, form) => {
    const session = await signedIn();

    const response = await postLogout(session, form);

    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(await stillSignedIn(session)).toBe(true);
    expect(fixture.issuer.revoked()).not.toContain(session.refreshToken);
  });

  it("with another session's CSRF token: 403 (the token is bound to the session)", async () => {
    const victim = await signedIn();
    const attacker = await signedIn();
    const attackerPage = await getLogout(attacker, { 'sec-fetch-site': 'cross-site' });

    const response = await postLogout(victim, `csrf=${encodeURIComponent(csrfOf(attackerPage.body))}`);

    expect(response.statusCode).toBe(403);
    expect(await stillSignedIn(victim)).toBe(true);
  });

  it('with the token /bff/user hands to the /fixture.app page: signs out', async () => {
    const session = await signedIn();
    const user = await fixture.app.inject({
      method: 'GET',
      url: '/bff/user',
      headers: { cookie: session.cookie, 'x-csrf': '1' },
    });
    expect(user.statusCode).toBe(200);

    const response = await postLogout(session, `csrf=${encodeURIComponent(user.json().signOutToken)}`);

    expect(response.statusCode).toBe(303);
    expect(await stillSignedIn(session)).toBe(false);
  });
});

describe('GET /signed-out', () => {
  it('says the user is signed out, and does not start a sign-in', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/signed-out' });

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('data-signed-out="true"');
    expect(response.headers.location).toBeUndefined();
  });
});
