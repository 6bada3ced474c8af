import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredSession } from '../src/token-store.js';
import { type OrdersApi, SAMPLE_ORDERS, startOrdersApi } from './helpers/orders-api.js';
import {
  ALICE,
  type AuthServer,
  findFreePort,
  ORDERS_API,
  runCli,
  startAuthServer,
  startCli,
} from './helpers/processes.js';
import { VerificationBrowser } from './helpers/verification-browser.js';

const USER_CODE = /enter the code:\s+([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})/;
const VERIFICATION_URI = /open this page in a browser on any device:\s+(\S+)/;

let server: AuthServer;
let api: OrdersApi;
const directories: string[] = [];

beforeAll(async () => {
  server = await startAuthServer();
  api = await startOrdersApi(server.issuer, { id: ORDERS_API, secret: server.resourceSecret });
});
afterAll(async () => {
  await api?.close();
  await server?.stop();
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

/** A fresh config dir (what ORDERS_CLI_CONFIG_DIR points at), under a parent the CLI must create. */
async function newConfigDir(): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), 'orders-cli-test-'));
  directories.push(parent);
  return join(parent, 'orders-cli');
}

const cliEnv = (configDir: string, overrides: Record<string, string> = {}) => ({
  ORDERS_ISSUER: server.issuer,
  ORDERS_API_URL: api.url,
  ORDERS_CLI_CONFIG_DIR: configDir,
  ...overrides,
});

const readSession = async (configDir: string) =>
  JSON.parse(await readFile(join(configDir, 'tokens.json'), 'utf8')) as StoredSession;

/** `orders login`, with the person at the browser approving or denying by plain HTTP. */
async function login(configDir: string, decision: 'approve' | 'deny', options: { umask?: string } = {}) {
  const cli = startCli(['login'], cliEnv(configDir), options);
  const [, userCode] = await cli.waitForStdout(USER_CODE);
  const [, verificationUri] = await cli.waitForStdout(VERIFICATION_URI);
  const page = await new VerificationBrowser().approve(verificationUri!, userCode!, { ...ALICE, decision });
  const code = await cli.exited;
  return {
    code,
    stdout: cli.stdout(),
    stderr: cli.stderr(),
    page,
    userCode: userCode!,
    verificationUri: verificationUri!,
  };
}

function tokenRequest(params: Record<string, string>) {
  return fetch(`${server.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'orders-cli', ...params }).toString(),
  });
}

function revoke(token: string) {
  return fetch(`${server.issuer}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'orders-cli', token }).toString(),
  });
}

describe('orders login → whoami → list → logout, against a live auth server', () => {
  let configDir: string;
  let firstSession: StoredSession;

  it('login prints the verification URL and code, waits for the approval, saves the tokens', async () => {
    configDir = await newConfigDir();
    // A permissive umask: the file and directory modes must not depend on it.
    const result = await login(configDir, 'approve', { umask: '000' });

    expect(result.code).toBe(0);
    expect(result.verificationUri).toBe(`${server.issuer}/device`);
    expect(result.stdout).toContain(`${server.issuer}/device?user_code=${result.userCode}`);
    expect(result.page.body).toContain('Device connected');
    expect(result.stdout).toContain('Signed in as Alice Example <alice@example.com>.');
    // No spinner or QR code control characters when the output is not a terminal.
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toContain('\x1b');

    expect((await stat(join(configDir, 'tokens.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    firstSession = await readSession(configDir);
    expect(firstSession).toMatchObject({
      issuer: server.issuer,
      clientId: 'orders-cli',
      sub: 'u-alice',
      name: 'Alice Example',
      email: 'alice@example.com',
      refreshToken: expect.any(String),
      accessToken: expect.any(String),
    });
    expect(firstSession.scope.split(' ')).toEqual(expect.arrayContaining(['openid', 'orders.read']));
  });

  it('whoami shows the user from UserInfo', async () => {
    const result = await runCli(['whoami'], cliEnv(configDir));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Signed in to ${server.issuer} as Alice Example <alice@example.com>`);
    expect(result.stdout).toMatch(/subject\s+u-alice/);
    const json = await runCli(['whoami', '--json'], cliEnv(configDir));
    expect(JSON.parse(json.stdout)).toMatchObject({ sub: 'u-alice', email: 'alice@example.com' });
  });

  it('list calls GET /orders with the stored access token and prints the orders', async () => {
    const seen = api.tokens.length;
    const result = await runCli(['list'], cliEnv(configDir));
    expect(result.code).toBe(0);
    expect(api.tokens.slice(seen)).toEqual([firstSession.accessToken]);
    expect(result.stdout).toMatch(/ID\s+QTY\s+TOTAL\s+STATUS\s+CREATED/);
    expect(result.stdout).toMatch(/7\s+2\s+19\.98\s+created\s+2026-11-21 10:15:00Z/);
    expect(result.stdout).toContain('2 orders.');
    const json = await runCli(['list', '--json'], cliEnv(configDir));
    expect(JSON.parse(json.stdout)).toEqual(SAMPLE_ORDERS);
  });

  it('list refreshes an expired access token first and saves the rotated refresh token', async () => {
    const before = await readSession(configDir);
    await writeFile(join(configDir, 'tokens.json'), JSON.stringify({ ...before, accessTokenExpiresAt: 0 }));
    const seen = api.tokens.length;

    const result = await runCli(['list'], cliEnv(configDir));

    expect(result.code).toBe(0);
    const after = await readSession(configDir);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.accessTokenExpiresAt).toBeGreaterThan(Date.now() / 1000);
    expect(api.tokens.slice(seen)).toEqual([after.accessToken]);
    expect((await stat(join(configDir, 'tokens.json'))).mode & 0o777).toBe(0o600);
  });

  it('list refreshes once and retries when the API answers 401 (access token revoked)', async () => {
    const before = await readSession(configDir);
    expect((await revoke(before.accessToken)).status).toBe(200);
    const seen = api.tokens.length;

    const result = await runCli(['list'], cliEnv(configDir));

    expect(result.code).toBe(0);
    const after = await readSession(configDir);
    expect(api.tokens.slice(seen)).toEqual([before.accessToken, after.accessToken]);
    expect(after.refreshToken).not.toBe(before.refreshToken);
  });

  it('logout revokes the refresh token and deletes the file; whoami then says not signed in (4)', async () => {
    const before = await readSession(configDir);
    const result = await runCli(['logout'], cliEnv(configDir));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('the refresh token was revoked');
    await expect(stat(join(configDir, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' });

    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: before.refreshToken! });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });

    const whoami = await runCli(['whoami'], cliEnv(configDir));
    expect(whoami.code).toBe(4);
    expect(whoami.stderr).toContain(`You are not signed in to ${server.issuer}.`);
    expect(whoami.stderr).toContain('Run `orders login`.');
    const again = await runCli(['logout'], cliEnv(configDir));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Not signed in');
  });
});

describe('failure paths', () => {
  it('denied in the browser: exit 2, a clear message, no token file', async () => {
    const configDir = await newConfigDir();
    const result = await login(configDir, 'deny');
    expect(result.page.body).toContain('Access denied');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Sign-in was denied in the browser.');
    await expect(stat(join(configDir, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('code not approved before it expires: exit 2 with "expired"', async () => {
    const shortLived = await startAuthServer({ DEVICE_CODE_TTL: '2' });
    try {
      const configDir = await newConfigDir();
      const result = await runCli(['login'], { ...cliEnv(configDir), ORDERS_ISSUER: shortLived.issuer });
      expect(result.stdout).toMatch(USER_CODE);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('The code expired before it was approved.');
      await expect(stat(join(configDir, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await shortLived.stop();
    }
  });

  it('Ctrl+C while waiting for the approval: exit 130, no token file', async () => {
    const configDir = await newConfigDir();
    const cli = startCli(['login'], cliEnv(configDir));
    await cli.waitForStdout(USER_CODE);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(130);
    expect(cli.stderr()).toContain('Sign-in cancelled.');
    await expect(stat(join(configDir, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('authorization server unreachable: exit 3', async () => {
    const closedPort = await findFreePort();
    const result = await runCli(
      ['login'],
      cliEnv(await newConfigDir(), { ORDERS_ISSUER: `http://127.0.0.1:${closedPort}` }),
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      `Cannot reach the authorization server at http://127.0.0.1:${closedPort}.`,
    );
  });

  it('orders API unreachable: exit 3, and the session is kept', async () => {
    const configDir = await newConfigDir();
    expect((await login(configDir, 'approve')).code).toBe(0);
    const closedPort = await findFreePort();
    const result = await runCli(['list', '--api-url', `http://127.0.0.1:${closedPort}`], cliEnv(configDir));
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`Cannot reach the orders API at http://127.0.0.1:${closedPort}/orders.`);
    expect((await readSession(configDir)).sub).toBe('u-alice');
  });

  it('a session revoked at the server: the refresh fails, exit 4, the file is deleted', async () => {
    const configDir = await newConfigDir();
    expect((await login(configDir, 'approve')).code).toBe(0);
    const session = await readSession(configDir);
    expect((await revoke(session.refreshToken!)).status).toBe(200);
    await writeFile(join(configDir, 'tokens.json'), JSON.stringify({ ...session, accessTokenExpiresAt: 0 }));

    const result = await runCli(['whoami'], cliEnv(configDir));

    expect(result.code).toBe(4);
    expect(result.stderr).toContain('Your session has ended (revoked or expired)');
    await expect(stat(join(configDir, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a session stored for another issuer counts as not signed in there', async () => {
    const configDir = await newConfigDir();
    expect((await login(configDir, 'approve')).code).toBe(0);
    const result = await runCli(['list', '--issuer', 'http://127.0.0.1:1'], cliEnv(configDir));
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('You are not signed in to http://127.0.0.1:1.');
  });
});
