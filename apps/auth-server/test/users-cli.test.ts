import { join } from 'node:path';
import { type CommandResult, runNodeScript } from '@oidc-orders/service-kit/testing';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import {
  basicAuthorization,
  FORM,
  form,
  startTestApp,
  TEST_ISSUER,
  TEST_KEY_ENCRYPTION_KEY,
  type TestApp,
} from './helpers/app.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { REPORTS_API, TEST_SECRETS } from './helpers/seed.js';

/**
 * The `users` command as an operator runs it: a separate process on the database
 * of a running server, here an in-process app on a fresh PostgreSQL database (TEST_DATABASE_URL's
 * server, else the local one; an in-memory PGlite cannot be shared between processes). What the
 * command changes, the running server sees on its next request, without a restart.
 * test/users-admin.test.ts covers the same functions in-process; this covers the process: the
 * arguments, standard input, what it prints, its audit line and its exit code.
 */
const postgres = await postgresForThisFile('test/users-cli.test.ts');
let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;

beforeAll(async () => {
  if (!postgres) return;
  database = await createPostgresTestDatabase();
  ({ app, close } = await startTestApp({ database }));
});
afterAll(async () => {
  await close?.();
  await database?.drop();
});

type Run = CommandResult;

/** `pnpm --filter auth-server users …` is `tsx src/cli/users.ts …` in this folder: the same, without pnpm. */
function users(args: string[], stdin = ''): Promise<Run> {
  if (database.location.driver !== 'pg') throw new Error('the CLI needs a shared database');
  const environment = {
    NODE_ENV: 'production',
    DATABASE_URL: database.location.connectionString,
    ISSUER: TEST_ISSUER,
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
  };
  return runNodeScript(join(import.meta.dirname, '..'), 'src/cli/users.ts', args, environment, stdin);
}

/** The audit lines (JSON) a run wrote to stderr. */
const auditLines = (run: Run) =>
  run.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const introspect = async (token: string) =>
  (
    await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi) },
      payload: form({ token }),
    })
  ).json();

/** Signs in to /account with a password; answers the page after the login form. */
async function signIn(browser: TestBrowser, username: string, password: string) {
  const start = await browser.get('/account');
  if (start.statusCode === 200) return start;
  const page = await browser.get(start.headers.location as string);
  return browser.post(browser.lastUrl, { ...hiddenFields(page.body), username, password });
}

const signedInToAccount = (response: LightMyRequestResponse) =>
  response.statusCode === 303 && locationOf(response).pathname === '/account';

describe.runIf(postgres)('users CLI, a separate process on the running server’s database', () => {
  let aliceBrowser: TestBrowser;
  let tokens: Record<string, string | number>;

  it('list and show print every user with its sessions and grants', async () => {
    aliceBrowser = new TestBrowser(app);
    expect(signedInToAccount(await signIn(aliceBrowser, 'alice', TEST_SECRETS.alicePassword))).toBe(true);
    tokens = await webClientTokens(app, 'openid offline_access reports.read');

    const listed = await users(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /^alice\tsub=u-alice\t.*\tmanaged_by=seed\tkind=seed\tdisabled=false\tsessions=1\tgrants=1\n$/,
    );
    const shown = await users(['show', 'alice']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('name=Alice Example');
  });

  it('disable: the refresh token, the opaque access token and the session stop at once; exit 0', async () => {
    expect((await introspect(tokens.access_token as string)).active).toBe(true);

    const run = await users(['disable', 'alice']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('disabled alice; ended 1 session(s), revoked 1 grant(s)\n');
    // What disabling means for this kind of account, from the account-kind table.
    expect(run.stderr).toContain('users: seed account: no sign-in, tokens stop; the seed never re-enables');
    expect(auditLines(run)).toEqual([
      expect.objectContaining({ event: 'auth.admin.user_disabled', sub: 'u-alice' }),
    ]);
    // Stored too, for the console's audit log.
    const stored = await app.auditEvents.query({
      sub: 'u-alice',
      event: 'auth.admin.user_disabled',
      limit: 5,
    });
    expect(stored.events).toEqual([expect.objectContaining({ outcome: 'success', actor: null })]);

    // The server, untouched and not restarted, refuses everything of Alice's on the next request.
    const refresh = await refreshWithWebClient(app, tokens.refresh_token as string);
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    expect(await introspect(tokens.access_token as string)).toEqual({ active: false });
    const account = await aliceBrowser.get('/account');
    expect(account.statusCode).toBe(303);
    expect(locationOf(account).pathname).toMatch(/\/login$/);
    // And she cannot sign in again.
    expect(signedInToAccount(await signIn(new TestBrowser(app), 'alice', TEST_SECRETS.alicePassword))).toBe(
      false,
    );

    const again = await users(['disable', 'alice']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('already disabled: alice; ended 0 session(s), revoked 0 grant(s)\n');
  });

  it('enable lets the user sign in again', async () => {
    const run = await users(['enable', 'alice']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('enabled alice\n');
    expect(auditLines(run)).toEqual([
      expect.objectContaining({ event: 'auth.admin.user_enabled', sub: 'u-alice' }),
    ]);
    expect(signedInToAccount(await signIn(new TestBrowser(app), 'alice', TEST_SECRETS.alicePassword))).toBe(
      true,
    );
  });

  it('add reads the password from standard input, refuses a common one, and the new user can sign in', async () => {
    const common = await users(['add', 'zoe', '--sub', 'u-zoe'], 'Password123\n');
    expect(common.code).toBe(1);
    expect(common.stderr).toContain('users: That password is too common.');
    expect(common.stdout).toBe('');

    const added = await users(['add', 'zoe', '--sub', 'u-zoe', '--name', 'Zoe'], 'zoe-violet-tractor-42\n');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^added zoe\tsub=u-zoe\tname=Zoe\t/);
    expect(auditLines(added)).toEqual([
      expect.objectContaining({ event: 'auth.admin.user_added', sub: 'u-zoe' }),
    ]);
    expect(signedInToAccount(await signIn(new TestBrowser(app), 'zoe', 'zoe-violet-tractor-42'))).toBe(true);
  });

  it('reset-password ends the sessions; the new password signs in, the old one not', async () => {
    const zoeBrowser = new TestBrowser(app);
    expect(signedInToAccount(await signIn(zoeBrowser, 'zoe', 'zoe-violet-tractor-42'))).toBe(true);
    const run = await users(['reset-password', 'zoe'], 'zoe-amber-glacier-77\n');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^password reset for zoe; ended 2 session\(s\), revoked 0 grant\(s\)\n$/);
    expect((await zoeBrowser.get('/account')).statusCode).toBe(303);
    expect(signedInToAccount(await signIn(new TestBrowser(app), 'zoe', 'zoe-violet-tractor-42'))).toBe(false);
    expect(signedInToAccount(await signIn(new TestBrowser(app), 'zoe', 'zoe-amber-glacier-77'))).toBe(true);
  });

  it('reset-mfa says what it removed, and ends the sessions', async () => {
    const zoeBrowser = new TestBrowser(app);
    expect(signedInToAccount(await signIn(zoeBrowser, 'zoe', 'zoe-amber-glacier-77'))).toBe(true);
    const run = await users(['reset-mfa', 'zoe']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'removed 0 authenticator app(s), 0 passkey(s) and 0 recovery code(s) of zoe; ended 2 session(s), revoked 0 grant(s)\n',
    );
    expect((await zoeBrowser.get('/account')).statusCode).toBe(303);
    expect(auditLines(run)).toEqual([
      expect.objectContaining({ event: 'auth.admin.mfa_reset', sub: 'u-zoe', count: 0 }),
    ]);
  });

  it('an unknown user: exit 1 with a clear message, nothing on stdout', async () => {
    const runs = await Promise.all([users(['disable', 'nobody']), users(['enable', 'nobody'])]);
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(run.stderr).toBe('users: no user named "nobody"\n');
      expect(run.stdout).toBe('');
    }
  });

  it('an unknown command: exit 1 with the usage', async () => {
    const run = await users(['frobnicate', 'alice']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^usage: users <command>/);
  });
});
