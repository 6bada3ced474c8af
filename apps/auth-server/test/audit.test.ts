import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS } from '../src/audit.js';
import { confirmLogout, hiddenFields, locationOf } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_KEY_ENCRYPTION_KEY } from './helpers/app.js';
import { captureLogs, openLoginPage, submitLogin } from './helpers/security.js';
import { TEST_SECRETS, WEB_REDIRECT_URI } from './helpers/seed.js';
import { ALICE, CONSENTING, signInSeed } from './sign-in-fixtures.js';

/**
 * Security events are pino lines with a stable `event` (docs/security-and-operations.md "Audit
 * events"): each event site writes its line, with identifiers only, and no line carries a secret.
 */

const logs = captureLogs();
let started: Awaited<ReturnType<typeof startTestApp>>;
const secretsSeen: string[] = [];

beforeAll(async () => {
  started = await startTestApp({ seed: signInSeed(), logger: logs.logger });
});
afterAll(async () => {
  await started?.close();
});

const token = (payload: Record<string, string>, client = { id: 'web', secret: TEST_SECRETS.web }) =>
  started.app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization(client.id, client.secret) },
    payload: form(payload),
  });

function only(event: string) {
  const lines = logs.events(event);
  expect(lines.length, `${event} lines`).toBeGreaterThanOrEqual(1);
  for (const line of lines) expect(line).toMatchObject({ level: 30, audit: true, msg: event });
  return lines;
}

describe('audit events', () => {
  it('auth.login.failed for a wrong password and an unknown user, without the typed name', async () => {
    const wrong = await openLoginPage(started.app);
    expect(
      (await submitLogin(wrong.browser, wrong.page, ALICE.username, 'not-her-password')).statusCode,
    ).toBe(401);
    const unknown = await openLoginPage(started.app);
    expect((await submitLogin(unknown.browser, unknown.page, 'mallory-typed-this', 'x')).statusCode).toBe(
      401,
    );
    secretsSeen.push('not-her-password', 'mallory-typed-this');

    const lines = only(AUDIT_EVENTS.loginFailed);
    expect(lines).toContainEqual(
      expect.objectContaining({
        reason: 'wrong_password',
        sub: ALICE.sub,
        client_id: 'web',
        ip: '127.0.0.1',
      }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ reason: 'unknown_user', client_id: 'web' }));
  });

  it('auth.login.succeeded, then auth.token.reuse_detected when a rotated refresh token comes back', async () => {
    const { browser, page, verifier } = await openLoginPage(started.app);
    const redirect = await submitLogin(browser, page, ALICE.username, ALICE.password);
    const code = locationOf(redirect).searchParams.get('code')!;
    const issued = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(issued.statusCode).toBe(200);
    const tokens = issued.json() as Record<string, string>;
    expect(only(AUDIT_EVENTS.loginSucceeded)).toContainEqual(
      expect.objectContaining({ sub: ALICE.sub, client_id: 'web', ip: '127.0.0.1' }),
    );

    const rotated = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    expect(rotated.statusCode).toBe(200);
    const reused = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    expect(reused.json().error).toBe('invalid_grant');
    const replayedCode = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(replayedCode.json().error).toBe('invalid_grant');
    secretsSeen.push(
      ALICE.password,
      code,
      verifier,
      tokens.access_token!,
      tokens.refresh_token!,
      tokens.id_token!,
      ...['access_token', 'refresh_token', 'id_token'].map(
        (name) => (rotated.json() as Record<string, string>)[name]!,
      ),
    );

    const lines = only(AUDIT_EVENTS.tokenReuseDetected);
    expect(lines.map((line) => line.grant_type).sort()).toEqual(['authorization_code', 'refresh_token']);
    for (const line of lines) {
      expect(line).toMatchObject({ client_id: 'web', grant_id: expect.any(String) });
    }

    // auth.token.revoked
    const revoked = await started.app.inject({
      method: 'POST',
      url: '/revoke',
      headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
      payload: form({
        token: (rotated.json() as Record<string, string>).refresh_token!,
        token_type_hint: 'refresh_token',
      }),
    });
    expect(revoked.statusCode).toBe(200);
    expect(only(AUDIT_EVENTS.tokenRevoked)).toContainEqual(
      expect.objectContaining({ client_id: 'web', token_type_hint: 'refresh_token' }),
    );

    // auth.logout: RP-initiated logout ends the SSO session of this browser.
    const logout = await confirmLogout(browser, await browser.get(`/logout?client_id=web`));
    expect([200, 302]).toContain(logout.statusCode);
    expect(only(AUDIT_EVENTS.logout)).toContainEqual(
      expect.objectContaining({ sub: ALICE.sub, sid: expect.any(String), client_id: 'web' }),
    );
  });

  it('auth.consent.granted and auth.consent.denied with the client and scopes', async () => {
    // Deny first: an approval is remembered, and the next sign-in would not ask again.
    for (const decision of ['deny', 'approve'] as const) {
      const { browser, page } = await openLoginPage(started.app, {
        clientId: CONSENTING.clientId,
        redirectUri: CONSENTING.redirectUri,
        scope: 'openid profile',
      });
      const afterLogin = await submitLogin(browser, page, ALICE.username, ALICE.password);
      const consentPage = await browser.follow(afterLogin);
      expect(consentPage.body).toContain('name="decision"');
      const answer = await browser.post(browser.lastUrl, { ...hiddenFields(consentPage.body), decision });
      expect([302, 303]).toContain(answer.statusCode);
    }
    expect(only(AUDIT_EVENTS.consentGranted)).toContainEqual(
      expect.objectContaining({
        sub: ALICE.sub,
        client_id: CONSENTING.clientId,
        scopes: ['openid', 'profile'],
      }),
    );
    expect(only(AUDIT_EVENTS.consentDenied)).toContainEqual(
      expect.objectContaining({ sub: ALICE.sub, client_id: CONSENTING.clientId }),
    );
  });

  it('no log line carries a password, client secret, code, verifier or token', () => {
    const written = logs.text();
    for (const secret of [...secretsSeen, TEST_SECRETS.web, TEST_SECRETS.service]) {
      expect(secret.length).toBeGreaterThan(0);
      expect(written).not.toContain(secret);
    }
  });
});

describe('auth.keys.rotated (the keys command)', () => {
  const run = promisify(execFile);
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'auth-audit-keys-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('is written to stderr as a JSON line naming the added and retired kids', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli/keys.ts', 'rotate', '--activate-in', '400'],
      {
        cwd: join(import.meta.dirname, '..'),
        env: {
          ...process.env,
          DATABASE_URL: `pglite://${join(directory, 'db')}`,
          KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
          METADATA_MAX_AGE: '300',
        },
      },
    );
    expect(stdout).toMatch(/^added /);
    const line = stderr
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.event === AUDIT_EVENTS.keysRotated);
    expect(line).toMatchObject({
      level: 30,
      audit: true,
      event: 'auth.keys.rotated',
      added: [expect.any(String), expect.any(String)],
      retired: expect.any(Array),
      deleted: [],
    });
  });
});
