import { asc } from 'drizzle-orm';
import type { JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { sessions } from '../src/db/schema.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../src/oidc/logout-token.js';
import { testConfig } from './helpers/app.js';
import { FAKE_CLIENT_ID } from './helpers/fake-issuer.js';
import { insertTestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * `POST /backchannel-logout` (OIDC Back-Channel Logout 1.0) with logout tokens a stand-in issuer
 * signs, valid and invalid. The real auth server's delivery is covered in signin.e2e.test.ts.
 */

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET: 'logout-test-session-secret-0123456789abcdef',
  },
  resetBeforeEach: true,
});

function logoutClaims(overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: fixture.issuer.issuer,
    aud: FAKE_CLIENT_ID,
    iat: now,
    exp: now + 120,
    jti: `jti-${Math.random()}`,
    sub: 'u-alice',
    sid: 'sid-1',
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...overrides,
  };
}

function postLogout(body: string) {
  return fixture.app.inject({
    method: 'POST',
    url: '/backchannel-logout',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: body,
  });
}

async function threeSessions() {
  const config = testConfig(fixture.environment);
  await insertTestSession(fixture.database, config, { sub: 'u-alice', sid: 'sid-1' });
  await insertTestSession(fixture.database, config, { sub: 'u-alice', sid: 'sid-2' });
  await insertTestSession(fixture.database, config, { sub: 'u-bob', sid: 'sid-3' });
}

async function remainingSids(): Promise<string[]> {
  const rows = await fixture.database.handle.db
    .select({ sid: sessions.sid })
    .from(sessions)
    .orderBy(asc(sessions.sid));
  return rows.map((row) => row.sid ?? '');
}

describe('POST /backchannel-logout', () => {
  it('a token with sid ends the sessions of that provider session only: 200, no-store', async () => {
    await threeSessions();
    const token = await fixture.issuer.sign(logoutClaims(), { typ: 'logout+jwt' });

    const response = await postLogout(`logout_token=${token}`);

    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(await remainingSids()).toEqual(['sid-2', 'sid-3']);
  });

  it('a token with only sub ends every session of that user', async () => {
    await threeSessions();
    const token = await fixture.issuer.sign(logoutClaims({ sid: undefined }), { typ: 'logout+jwt' });

    const response = await postLogout(`logout_token=${token}`);

    expect(response.statusCode).toBe(200);
    expect(await remainingSids()).toEqual(['sid-3']);
  });

  it('an untyped token (typ JWT) that is otherwise valid is accepted', async () => {
    await threeSessions();
    const token = await fixture.issuer.sign(logoutClaims({ sub: undefined }), { typ: 'JWT' });

    expect((await postLogout(`logout_token=${token}`)).statusCode).toBe(200);
    expect(await remainingSids()).toEqual(['sid-2', 'sid-3']);
  });

  it.each([
    ['another audience', { aud: 'someone-else' }, 'logout+jwt'],
    ['another issuer', { iss: 'https://evil.example' }, 'logout+jwt'],
    ['no events claim', { events: undefined }, 'logout+jwt'],
    ['events without the back-channel logout member', { events: { 'urn:other': {} } }, 'logout+jwt'],
    ['an event that is not an object', { events: { [BACKCHANNEL_LOGOUT_EVENT]: 'yes' } }, 'logout+jwt'],
    ['a nonce (an ID token)', { nonce: 'n-1' }, 'logout+jwt'],
    ['neither sid nor sub', { sid: undefined, sub: undefined }, 'logout+jwt'],
    ['no iat', { iat: undefined }, 'logout+jwt'],
    ['an iat from an hour ago', { iat: Math.floor(Date.now() / 1000) - 3600, exp: undefined }, 'logout+jwt'],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 120 }, 'logout+jwt'],
    ['the access-token type', {}, 'at+jwt'],
  ])('%s: 400 and no session ends', async (_name, overrides, typ) => {
    await threeSessions();
    const token = await fixture.issuer.sign(logoutClaims(overrides as JWTPayload), { typ });

    const response = await postLogout(`logout_token=${token}`);

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ statusCode: 400, message: expect.any(String) });
    expect(await remainingSids()).toEqual(['sid-1', 'sid-2', 'sid-3']);
  });

  it('a token signed by a key the provider does not publish: 400', async () => {
    await threeSessions();
    await fixture.issuer.addUnpublishedKey('foreign');
    const token = await fixture.issuer.sign(logoutClaims(), { typ: 'logout+jwt', kid: 'foreign' });

    expect((await postLogout(`logout_token=${token}`)).statusCode).toBe(400);
    expect(await remainingSids()).toHaveLength(3);
  });

  it('an unsigned token (alg none) is refused like the access tokens are: 400', async () => {
    await threeSessions();
    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
    const token = `${encode({ alg: 'none', typ: 'logout+jwt' })}.${encode(logoutClaims())}.`;

    expect((await postLogout(`logout_token=${token}`)).statusCode).toBe(400);
    expect(await remainingSids()).toHaveLength(3);
  });

  it.each([
    ['no logout_token', 'other=1'],
    ['garbage', 'logout_token=not-a-jwt'],
    ['a repeated logout_token', 'logout_token=a.b.c&logout_token=a.b.c'],
  ])('%s: 400', async (_name, body) => {
    expect((await postLogout(body)).statusCode).toBe(400);
  });
});
