import { describe, expect, it } from 'vitest';
import { AUDIT_EVENTS } from '../src/audit.js';
import { TEST_API_KEY, testConfig } from './helpers/app.js';
import { insertTestSession } from './helpers/sessions.js';
import { useSignInApp } from './helpers/sign-in-app.js';

/**
 * Security events of the orders service are pino lines with a stable `event`
 * (docs/security-and-operations.md, "Audit events"), carrying identifiers only. The successful
 * sign-in event is written against the real authorization server in
 * e2e/test/multi-instance.test.ts.
 */

const SESSION_SECRET = 'audit-test-session-secret-0123456789abcdef';
const lines: string[] = [];

const fixture = useSignInApp({
  environment: {
    SESSION_SECRET,
    BASE_URL: 'https://orders.example.test',
    LOG_LEVEL: 'info',
  },
  deps: { logStream: { write: (line: string) => void lines.push(line) } },
});

const events = (event: string) =>
  lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.event === event);

describe('audit events', () => {
  it('orders.api_key.rejected for a missing and a wrong key, without the key', async () => {
    const wrongKey = 'wrong-key-that-must-not-be-logged-0123';
    expect((await fixture.app.inject({ method: 'GET', url: '/users' })).statusCode).toBe(403);
    expect(
      (await fixture.app.inject({ method: 'GET', url: '/users', headers: { 'x-api-key': wrongKey } }))
        .statusCode,
    ).toBe(403);
    expect(
      (await fixture.app.inject({ method: 'GET', url: '/users', headers: { 'x-api-key': TEST_API_KEY } }))
        .statusCode,
    ).toBe(200);
    const rejected = events(AUDIT_EVENTS.apiKeyRejected);
    expect(rejected.map((line) => line.reason)).toEqual(['missing', 'invalid']);
    for (const line of rejected) expect(line).toMatchObject({ level: 30, audit: true, ip: '127.0.0.1' });
    expect(lines.join('')).not.toContain(wrongKey);
    expect(lines.join('')).not.toContain(TEST_API_KEY);
  });

  it('orders.signin.failed for a state that does not decrypt and for a failed correlation', async () => {
    const noState = await fixture.app.inject({
      method: 'POST',
      url: '/signin-oidc',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'state=forged.state.value.x.y&code=the-code-0123456789',
    });
    expect(noState.statusCode).toBe(400);
    const login = await fixture.app.inject({ method: 'GET', url: '/login?returnUrl=/' });
    const state = new URL(login.headers.location as string).searchParams.get('state')!;
    const uncorrelated = await fixture.app.inject({
      method: 'POST',
      url: '/signin-oidc',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state, code: 'the-code-0123456789' }).toString(),
    });
    expect(uncorrelated.statusCode).toBe(400);
    expect(events(AUDIT_EVENTS.signInFailed).map((line) => line.reason)).toEqual([
      'state_invalid',
      'correlation_failed',
    ]);
    expect(lines.join('')).not.toContain('the-code-0123456789');
    expect(lines.join('')).not.toContain(state);
  });

  it('orders.logout with the subject, and orders.backchannel_logout.rejected for a bad token', async () => {
    const session = await insertTestSession(fixture.database, testConfig(fixture.environment), {
      sub: 'u-audit',
      tokens: { idToken: 'header.payload.signature' },
    });
    expect(
      (await fixture.app.inject({ method: 'GET', url: '/logout', headers: { cookie: session.cookie } }))
        .statusCode,
    ).toBe(302);
    expect(events(AUDIT_EVENTS.logout)).toEqual([
      expect.objectContaining({ sub: 'u-audit', msg: 'signed out' }),
    ]);
    expect(lines.join('')).not.toContain(session.cookie.split('=')[1]!);

    const backchannel = await fixture.app.inject({
      method: 'POST',
      url: '/backchannel-logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'logout_token=not.a.jwt',
    });
    expect(backchannel.statusCode).toBe(400);
    expect(events(AUDIT_EVENTS.backchannelLogoutRejected)).toHaveLength(1);
  });
});
