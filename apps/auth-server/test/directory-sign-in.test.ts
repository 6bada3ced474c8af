/**
 * Directory users against a real OpenLDAP (the service kit's testing/slapd.ts): sign-in on the login form, the local
 * account record keyed by `entryUUID`, groups in tokens, lockout, the directory as the truth at
 * refresh, a stopped and restarted directory, and a second factor on a directory user. The
 * directory client is the server's own (src/directory/), nothing stands in for it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ACR_VALUES } from '@oidc-orders/oauth-core';
import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { describeWithSlapd } from '@oidc-orders/service-kit/testing';
import { and, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsersAdmin, DirectoryManagedUserError } from '../src/admin/users-admin.js';
import { externalIdentities, ssoSessions, users } from '../src/db/schema.js';
import { DIRECTORY_SOURCE } from '../src/directory/directory-accounts.js';
import { createPasswordRecovery, DEFAULT_MAIL_RATE_LIMITS } from '../src/mail/password-reset.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { type DirectoryFixture, startDirectoryFixture } from './helpers/directory-fixture.js';
import { type RedeemingClient, redeemRedirect } from './helpers/flows.js';
import {
  ORDERS_API,
  REQUIRE_MFA_CLIENT,
  requireMfaClientEntry,
  TEST_SECRETS,
  testSeed,
  WEB_REDIRECT_URI,
} from './helpers/seed.js';
import { ALICE, authorizePath, pkcePair } from './sign-in-fixtures.js';

const STRICT = REQUIRE_MFA_CLIENT;

/** The test seed with `groups` granted to `web` and copied into the orders API's tokens. */
function directorySeed(): SeedDocument {
  const seed = testSeed();
  return {
    ...seed,
    clients: [
      ...(seed.clients ?? []).map((client) =>
        client.client_id === 'web' ? { ...client, scope: `${client.scope} groups` } : client,
      ),
      requireMfaClientEntry(),
    ],
    resources: (seed.resources ?? []).map((resource) =>
      resource.id === ORDERS_API ? { ...resource, claims: ['email', 'groups'] } : resource,
    ),
    users: [
      ...(seed.users ?? []),
      { sub: 'u-shadow', username: 'shadow', password: 'shadow-local-password-1' },
    ],
  };
}

const clock = createTestClock(Math.floor(Date.now() / 1000));
let fixture: DirectoryFixture;
let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;
/** Every log line of the app, at level trace. */
const logLines: string[] = [];
const auditEvents = () =>
  logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.audit === true);

/** Without slapd the suite is left out with a line saying what to install (fails under CI=true). */
const slapdAvailable = describeWithSlapd();

beforeAll(async () => {
  if (!slapdAvailable) return;
  fixture = await startDirectoryFixture();
  ({ app, database, close } = await startTestApp({
    seed: directorySeed(),
    clock,
    directory: fixture.directory,
    env: { LOGIN_MAX_FAILURES_PER_USERNAME: '3' },
    logger: { level: 'trace', stream: { write: (line: string) => logLines.push(line) } },
  }));
}, 120_000);
afterAll(async () => {
  await close?.();
  await fixture?.close();
});

const SCOPE = 'openid profile email groups offline_access orders.read';

async function startAt(
  browser: TestBrowser,
  client = { clientId: 'web', redirectUri: WEB_REDIRECT_URI },
  scope = SCOPE,
) {
  const { verifier, challenge } = pkcePair();
  const response = await browser.get(
    authorizePath({
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      scope: client.clientId === 'web' ? scope : 'openid profile',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      nonce: 'n-1',
    }),
  );
  expect(locationOf(response).pathname).toMatch(/\/login$/);
  const page = await browser.follow(response);
  return { verifier, page };
}

async function submitLogin(browser: TestBrowser, page: string, username: string, password: string) {
  return browser.post(browser.lastUrl, { ...hiddenFields(page), username, password });
}

function redeem(response: LightMyRequestResponse, verifier: string, client?: RedeemingClient) {
  return redeemRedirect(app, response, verifier, client);
}

/** A whole password sign-in through the pages for the `web` client: its tokens. */
async function signIn(username: string, password: string, browser = new TestBrowser(app)) {
  const { verifier, page } = await startAt(browser);
  const response = await submitLogin(browser, page.body, username, password);
  expect(response.statusCode).toBe(303);
  return redeem(response, verifier);
}

function refresh(refreshToken: string) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
    payload: form({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
}

async function localRecordOf(sub: string) {
  const [row] = await database.handle.db.select().from(users).where(eq(users.sub, sub));
  return row;
}

describe.runIf(slapdAvailable)('sign-in with a directory account on the login form', () => {
  it('signs a directory user in; ID token, UserInfo and the orders API token carry their groups', async () => {
    const jdoe = await fixture.addUser('jdoe', { groups: ['staff', 'admins'], mail: 'jdoe@example.test' });
    const tokens = await signIn('jdoe', jdoe.password);
    const idToken = decodeJwt(tokens.id_token);
    expect(idToken).toMatchObject({ name: jdoe.cn, email: 'jdoe@example.test', amr: ['pwd'] });
    expect([...(idToken.groups as string[])].sort()).toEqual(['admins', 'staff']);
    const accessToken = decodeJwt(tokens.access_token);
    expect(accessToken.aud).toBe(ORDERS_API);
    expect([...(accessToken.groups as string[])].sort()).toEqual(['admins', 'staff']);
    const userInfo = await app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userInfo.statusCode).toBe(200);
    expect([...userInfo.json().groups].sort()).toEqual(['admins', 'staff']);

    // The local record: managed by the directory, keyed by entryUUID, no usable local password.
    const record = await localRecordOf(idToken.sub!);
    expect(record).toMatchObject({ managedBy: 'directory', username: 'ldap:jdoe' });
    expect(record?.passwordHash).not.toMatch(/^scrypt\$/);
    const [identity] = await database.handle.db
      .select()
      .from(externalIdentities)
      .where(and(eq(externalIdentities.source, DIRECTORY_SOURCE), eq(externalIdentities.sub, idToken.sub!)));
    expect(identity?.subject).toBe(await fixture.slapd.entryUuid('jdoe'));
  });

  it('a seed user has no groups claim even with the groups scope', async () => {
    const tokens = await signIn(ALICE.username, TEST_SECRETS.alicePassword);
    expect(decodeJwt(tokens.id_token)).not.toHaveProperty('groups');
  });

  it('discovery lists the groups scope and claim', async () => {
    const discovery = (await app.inject({ url: '/.well-known/openid-configuration' })).json();
    expect(discovery.scopes_supported).toContain('groups');
    expect(discovery.claims_supported).toContain('groups');
  });

  it('keeps the sub across a rename (new uid and DN), and the new name signs in', async () => {
    const before = await fixture.addUser('renamee');
    const first = decodeJwt((await signIn('renamee', before.password)).id_token);
    await fixture.slapd.renamePerson('renamee', 'renamed');
    const second = decodeJwt((await signIn('renamed', before.password)).id_token);
    expect(second.sub).toBe(first.sub);
    expect((await localRecordOf(first.sub!))?.username).toBe('ldap:renamed');
    // The old name no longer exists in the directory.
    const browser = new TestBrowser(app);
    const { page } = await startAt(browser);
    expect((await submitLogin(browser, page.body, 'renamee', before.password)).statusCode).toBe(401);
  });

  it('a deleted and re-created account with the same name is a new person', async () => {
    const first = await fixture.addUser('reborn');
    const before = decodeJwt((await signIn('reborn', first.password)).id_token);
    await fixture.slapd.deletePerson('reborn');
    const again = await fixture.addUser('reborn');
    const after = decodeJwt((await signIn('reborn', again.password)).id_token);
    expect(after.sub).not.toBe(before.sub);
    expect((await localRecordOf(after.sub!))?.username).toBe('ldap:reborn');
  });

  it('a local user keeps their account when the directory has the same username', async () => {
    const twin = await fixture.addUser('shadow');
    // The local password signs in the local user; the directory password does not reach the directory.
    expect(decodeJwt((await signIn('shadow', 'shadow-local-password-1')).id_token).sub).toBe('u-shadow');
    const browser = new TestBrowser(app);
    const { page } = await startAt(browser);
    expect((await submitLogin(browser, page.body, 'shadow', twin.password)).statusCode).toBe(401);
  });

  it('a wrong password is 401 with the usual words, then the username is locked out (429)', async () => {
    const locked = await fixture.addUser('forgetful');
    const browser = new TestBrowser(app);
    const { page } = await startAt(browser);
    const first = await submitLogin(browser, page.body, 'forgetful', 'not-the-password');
    expect(first.statusCode).toBe(401);
    expect(first.body).toContain('Invalid username or password.');
    await submitLogin(browser, first.body, 'forgetful', 'not-the-password');
    await submitLogin(browser, first.body, 'forgetful', 'not-the-password');
    const refused = await submitLogin(browser, first.body, 'forgetful', locked.password);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toEqual(expect.any(String));
  });

  it('the lock is per person: once `dana` is locked, `Dana`, `DANA` and ` danA ` are locked too, even with the right password', async () => {
    const dana = await fixture.addUser('dana');
    const browser = new TestBrowser(app);
    const { page } = await startAt(browser);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await submitLogin(browser, page.body, 'dana', 'not-the-password')).statusCode).toBe(401);
    }
    for (const spelling of ['Dana', 'DANA', ' danA ']) {
      expect((await submitLogin(browser, page.body, spelling, 'not-the-password')).statusCode).toBe(429);
    }
    const rightPassword = await submitLogin(browser, page.body, 'danA', dana.password);
    expect(rightPassword.statusCode).toBe(429);
    expect(rightPassword.headers['retry-after']).toEqual(expect.any(String));
  });
});

describe.runIf(slapdAvailable)('the directory stays the truth', () => {
  it('a user deleted in the directory loses refresh (invalid_grant), their sessions, and sign-in', async () => {
    const leaver = await fixture.addUser('leaver');
    const browser = new TestBrowser(app);
    const tokens = await signIn('leaver', leaver.password, browser);
    const sub = decodeJwt(tokens.id_token).sub!;
    const refreshed = await refresh(tokens.refresh_token!);
    expect(refreshed.statusCode).toBe(200);

    await fixture.slapd.deletePerson('leaver');
    // Past the short cache of the refresh check.
    clock.advance(61);
    const refused = await refresh(refreshed.json().refresh_token);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toBe('invalid_grant');
    const sessions = await database.handle.db.select().from(ssoSessions).where(eq(ssoSessions.sub, sub));
    expect(sessions).toHaveLength(0);

    const { page } = await startAt(new TestBrowser(app));
    const retry = new TestBrowser(app);
    const again = await startAt(retry);
    expect((await submitLogin(retry, again.page.body, 'leaver', leaver.password)).statusCode).toBe(401);
    expect(page.statusCode).toBe(200);
  });

  it('directory down: the login page says so (503) and a seed user still signs in; back up: the directory user signs in', async () => {
    const steady = await fixture.addUser('steady');
    const tokens = await signIn('steady', steady.password);
    await fixture.slapd.stop();
    try {
      const browser = new TestBrowser(app);
      const { page } = await startAt(browser);
      const started = Date.now();
      const down = await submitLogin(browser, page.body, 'steady', steady.password);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(down.statusCode).toBe(503);
      expect(down.body).toContain('The directory is not reachable');
      expect(down.body).toContain('name="password"');
      // A Kerberos principal only the directory could map is "unavailable", not "no such user".
      expect(await app.directorySignIn?.userForKerberosPrincipal('steady@EXAMPLE.TEST')).toBe('unavailable');
      // The same form still signs a seed user in.
      expect(
        (await submitLogin(browser, down.body, ALICE.username, TEST_SECRETS.alicePassword)).statusCode,
      ).toBe(303);
      // Refresh fails closed and temporarily; the token survives for later.
      clock.advance(61);
      const unavailable = await refresh(tokens.refresh_token!);
      expect(unavailable.statusCode).toBe(503);
      expect(unavailable.json().error).toBe('temporarily_unavailable');
    } finally {
      await fixture.slapd.start();
    }
    const back = await signIn('steady', steady.password);
    expect(decodeJwt(back.id_token).sub).toBe(decodeJwt(tokens.id_token).sub);
    expect((await refresh(tokens.refresh_token!)).statusCode).toBe(200);
  });
});

describe.runIf(slapdAvailable)('a second factor on a directory user', () => {
  const codeFor = (secret: string) =>
    TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.nowSeconds() * 1000 });

  it('enrols an authenticator app at a require_mfa client, then is asked for the code at the next sign-in', async () => {
    const careful = await fixture.addUser('careful');
    const client = { clientId: STRICT.clientId, redirectUri: STRICT.redirectUri, secret: STRICT.secret };
    const browser = new TestBrowser(app);
    const { verifier, page } = await startAt(browser, client);
    const afterPassword = await submitLogin(browser, page.body, 'careful', careful.password);
    expect(locationOf(afterPassword).pathname).toMatch(/\/enrol$/);
    const enrolPage = await browser.get(afterPassword.headers.location as string);
    const secret = /data-totp-secret="([A-Z2-7]+)"/.exec(enrolPage.body)?.[1];
    const confirmed = await browser.post(browser.lastUrl, {
      ...hiddenFields(enrolPage.body),
      otp: codeFor(secret!),
    });
    expect(confirmed.statusCode).toBe(200);
    const action = /<form method="post" class="stack" action="([^"]+)"/.exec(confirmed.body)?.[1];
    const done = await browser.post(action!, hiddenFields(confirmed.body));
    const tokens = await redeem(done, verifier, client);
    expect(decodeJwt(tokens.id_token)).toMatchObject({ acr: ACR_VALUES.mfa });

    clock.advance(30);
    const next = new TestBrowser(app);
    const again = await startAt(next);
    const nextPassword = await submitLogin(next, again.page.body, 'careful', careful.password);
    expect(locationOf(nextPassword).pathname).toMatch(/\/otp$/);
  });
});

describe.runIf(slapdAvailable)('the change-password step', () => {
  it('a password the administrator reset must be changed in the directory; then the sign-in goes on', async () => {
    const reset = await fixture.addUser('resetme');
    await fixture.slapd.requirePasswordChange('resetme');
    const browser = new TestBrowser(app);
    const { verifier, page } = await startAt(browser);
    const step = await submitLogin(browser, page.body, 'resetme', reset.password);
    expect(step.statusCode).toBe(200);
    expect(step.body).toContain('name="current_password"');
    const action = /<form method="post" class="stack" action="([^"]+)"/.exec(step.body)?.[1];
    expect(action).toMatch(/\/directory-password/);
    const fields = { ...hiddenFields(step.body), current_password: reset.password };
    const mismatch = await browser.post(action!, {
      ...fields,
      new_password: 'N3w-Directory-pass',
      confirm_password: 'other',
    });
    expect(mismatch.statusCode).toBe(400);
    const changed = await browser.post(action!, {
      ...fields,
      new_password: 'N3w-Directory-pass',
      confirm_password: 'N3w-Directory-pass',
    });
    expect(changed.statusCode).toBe(303);
    expect(decodeJwt((await redeem(changed, verifier)).id_token).name).toBe(reset.cn);
    // The directory holds the new password: it signs in, the old one does not.
    expect((await signIn('resetme', 'N3w-Directory-pass')).id_token).toEqual(expect.any(String));
  });
});

describe.runIf(slapdAvailable)('an expired password with grace logins left', () => {
  it('the grace login leads to the change-password step, saying how many are left', async () => {
    const policyDn = await fixture.slapd.addPolicy('one-grace-login-left', {
      pwdMaxAge: '1',
      pwdGraceAuthNLimit: '2',
    });
    await fixture.slapd.addPerson({
      uid: 'graceful',
      password: 'graceful-old-pw',
      cn: 'Graceful Example',
      policyDn,
    });
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const browser = new TestBrowser(app);
    const { verifier, page } = await startAt(browser);
    const step = await submitLogin(browser, page.body, 'graceful', 'graceful-old-pw');
    expect(step.statusCode).toBe(200);
    expect(step.body).toContain('Your directory password has expired. You can sign in with it 1 more time.');
    expect(step.body).toContain('name="current_password"');
    const action = /<form method="post" class="stack" action="([^"]+)"/.exec(step.body)?.[1];
    const changed = await browser.post(action!, {
      ...hiddenFields(step.body),
      current_password: 'graceful-old-pw',
      new_password: 'Gr4ceful-new-pass',
      confirm_password: 'Gr4ceful-new-pass',
    });
    expect(changed.statusCode).toBe(303);
    expect(decodeJwt((await redeem(changed, verifier)).id_token).name).toBe('Graceful Example');
  });
});

describe.runIf(slapdAvailable)('users directory', () => {
  function users(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/users.ts', ...args], {
      cwd: join(import.meta.dirname, '..'),
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        DATABASE_URL: 'pglite://memory',
        ISSUER: 'https://issuer.example.test',
        KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64url'),
        ...fixture.slapd.env(),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('lists the directory users and looks one up, with ids and groups and no secret', async () => {
    const listed = await fixture.addUser('listed', { groups: ['auditors'] });
    const lookup = await users(['directory', 'lookup', 'listed']);
    expect(lookup.code).toBe(0);
    expect(lookup.stdout).toContain(`listed\tstable_id=${await fixture.slapd.entryUuid('listed')}`);
    expect(lookup.stdout).toContain('groups=auditors');
    const list = await users(['directory', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').some((line) => line.startsWith('listed\t'))).toBe(true);
    for (const output of [lookup.stdout, lookup.stderr, list.stdout, list.stderr]) {
      expect(output).not.toContain(listed.password);
      expect(output).not.toContain(fixture.slapd.servicePassword);
    }
    const missing = await users(['directory', 'lookup', 'nobody-here']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no directory user nobody-here');
  });
});

describe.runIf(slapdAvailable)('no local password for a directory user', () => {
  it('users reset-password and a reset mail refuse a directory user; a local one would outlive the entry', async () => {
    const keeper = await fixture.addUser('keeper');
    const sub = decodeJwt((await signIn('keeper', keeper.password)).id_token).sub!;
    const { db } = database.handle;
    const { clock: appClock, random } = app.protocol;
    const admin = createUsersAdmin({
      db,
      keyEncryptionKey: app.config.keyEncryptionKey,
      clock: appClock,
      random,
      issuer: app.config.issuer,
      signOut: app.userSignOut,
    });
    await expect(admin.resetPassword('ldap:keeper', 'Local-password-123')).rejects.toBeInstanceOf(
      DirectoryManagedUserError,
    );
    const sent: unknown[] = [];
    const recovery = createPasswordRecovery({
      db,
      clock: appClock,
      random,
      issuer: app.config.issuer,
      signOut: app.userSignOut,
      log: app.log,
      limits: DEFAULT_MAIL_RATE_LIMITS,
      mailer: {
        transport: 'dev-mailbox',
        send: async (mail) => {
          sent.push(mail);
          return { sent: true };
        },
        close: async () => {},
      },
    });
    expect(await recovery.sendResetLinkTo(sub)).toMatchObject({ sent: false });
    expect(sent).toHaveLength(0);
    expect((await localRecordOf(sub))?.passwordHash).not.toMatch(/^scrypt\$/);
  });
});

describe.runIf(slapdAvailable)('audit and logs', () => {
  it('audits each directory outcome with its reason and source, and logs no directory password', async () => {
    const audited = await fixture.addUser('audited');
    const browser = new TestBrowser(app);
    const { page } = await startAt(browser);
    await submitLogin(browser, page.body, 'audited', 'wrong-directory-password');
    await signIn('audited', audited.password);
    const events = auditEvents().filter((event) => event.source === 'ldap');
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event: 'auth.login.failed', reason: 'directory_invalid_credentials' }),
        expect.objectContaining({
          event: 'auth.login.succeeded',
          method: 'password',
          sub: expect.any(String),
        }),
      ]),
    );
    const everything = logLines.join('\n');
    expect(everything).not.toContain(audited.password);
    expect(everything).not.toContain('wrong-directory-password');
    expect(everything).not.toContain(fixture.slapd.servicePassword);
  });
});
