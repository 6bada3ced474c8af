import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError, EXIT, isNetworkError } from '../src/errors.js';
import { run } from '../src/run.js';
import { configDirectory, resolveSettings } from '../src/settings.js';
import { createTokenStore, type StoredSession } from '../src/token-store.js';

const directories: string[] = [];
afterAll(() => Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'orders-cli-unit-'));
  directories.push(directory);
  return directory;
}

/** Runs `orders <argv>` in this process with captured output. */
async function orders(argv: string[], env: Record<string, string> = {}, invokedAs?: string) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await run(argv, {
    env: { ORDERS_CLI_CONFIG_DIR: join(tmpdir(), 'orders-cli-never-written'), ...env },
    terminal: { stdout, stderr },
    signal: new AbortController().signal,
    ...(invokedAs === undefined ? {} : { invokedAs }),
  });
  return { code, stdout: out, stderr: err };
}

const session = (over: Partial<StoredSession> = {}): StoredSession => ({
  issuer: 'http://127.0.0.1:4000',
  clientId: 'orders-cli',
  accessToken: 'at',
  accessTokenExpiresAt: 1_900_000_000,
  refreshToken: 'rt',
  idToken: null,
  scope: 'openid orders.read',
  sub: 'u-alice',
  name: 'Alice',
  email: null,
  ...over,
});

describe('commands, help and usage errors', () => {
  it.each([
    [['--help'], 'Usage: orders [options] <command>'],
    [['-h'], 'Usage: orders [options] <command>'],
    [['help'], 'Usage: orders [options] <command>'],
    [['login', '--help'], 'Usage: orders login'],
    [['help', 'login'], 'Usage: orders login'],
    [['whoami', '-h'], 'Usage: orders whoami'],
    [['list', '--help'], 'Usage: orders list'],
    [['logout', '--help'], 'Usage: orders logout'],
    [['--issuer', 'http://127.0.0.1:9', 'list', '--help'], 'Usage: orders list'],
    [['--', 'list', '--help'], 'Usage: orders list'],
  ])('orders %j prints help and exits 0', async (argv, heading) => {
    const result = await orders(argv);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(heading);
    expect(result.stderr).toBe('');
  });

  it('the main help documents the flags, the environment and the exit codes', async () => {
    const { stdout } = await orders(['--help']);
    for (const text of [
      '--issuer',
      'ORDERS_ISSUER',
      '--client-id',
      'ORDERS_CLIENT_ID',
      '--api-url',
      'ORDERS_API_URL',
    ]) {
      expect(stdout).toContain(text);
    }
    for (const code of [
      '0  success',
      '1  usage',
      '2  sign-in denied or expired',
      '3  the authorization server',
      '4  not signed in',
    ]) {
      expect(stdout).toContain(code);
    }
  });

  it.each([
    [[], 'a command is required'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['help', 'frobnicate'], 'unknown command "frobnicate"'],
    [['list', '--bogus'], "Unknown option '--bogus'"],
    [['logout', '--json'], "Unknown option '--json'"],
    [['whoami', 'extra'], 'unexpected argument "extra"'],
    [['list', '--issuer'], "Option '--issuer <value>' argument missing"],
    [['list', '--issuer', 'not a url'], 'is not a URL'],
    [['list', '--issuer', 'ftp://127.0.0.1'], 'must be an http(s) URL'],
    [['list', '--issuer', 'http://auth.example.com'], 'uses http on a host other than this machine'],
    [['list', '--issuer', 'https://auth.example.com/?tenant=x'], 'must not have a query or fragment'],
    [['list', '--api-url', 'http://api.example.com'], 'uses http on a host other than this machine'],
  ])('orders %j → exit 1 (%s)', async (argv, message) => {
    const result = await orders(argv);
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain(message);
  });

  it.each([
    [['lsit'], 'unknown command "lsit"; did you mean "list"?'],
    [['list', '--jsn'], `Unknown option '--jsn'; did you mean "--json"?`],
    [['--isuer', 'http://127.0.0.1:4000', 'list'], `did you mean "--issuer"?`],
  ])('orders %j → exit 1 with one line and a suggestion', async (argv, message) => {
    const result = await orders(argv);
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toContain('Usage:');
  });

  it('--version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(await readFile(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const result = await orders([flag]);
      expect(result.code).toBe(EXIT.ok);
      expect(result.stdout).toBe(`orders ${version}\n`);
    }
  });

  it('whoami and list without a stored session exit 4 without contacting any server', async () => {
    const configDir = await tempDir();
    // Port 9 (discard) is closed: had the CLI tried the network, this would be exit 3.
    for (const command of ['whoami', 'list']) {
      const result = await orders([command], {
        ORDERS_CLI_CONFIG_DIR: configDir,
        ORDERS_ISSUER: 'http://127.0.0.1:9',
      });
      expect(result.code).toBe(EXIT.notLoggedIn);
      expect(result.stderr).toContain('You are not signed in to http://127.0.0.1:9.');
    }
  });

  it('the hint names the command as it was run: `orders login` once installed, the script path before', async () => {
    const env = { ORDERS_CLI_CONFIG_DIR: await tempDir(), ORDERS_ISSUER: 'http://127.0.0.1:9' };
    const before = await orders(['list'], env, 'node packages/cli/bin/orders.js');
    expect(before.stderr).toContain('Run `node packages/cli/bin/orders.js login`.');
    expect(before.stderr).not.toContain('`orders login`');
    const installed = await orders(['list'], env, 'orders');
    expect(installed.stderr).toContain('Run `orders login`.');
  });

  it('logout without a stored session succeeds and says so', async () => {
    const result = await orders(['logout'], { ORDERS_CLI_CONFIG_DIR: await tempDir() });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Not signed in');
  });

  it('logout deletes a damaged token file', async () => {
    const configDir = await tempDir();
    await writeFile(join(configDir, 'tokens.json'), '{ not json');
    const whoami = await orders(['whoami'], { ORDERS_CLI_CONFIG_DIR: configDir });
    expect(whoami.code).toBe(EXIT.notLoggedIn);
    expect(whoami.stderr).toContain('is damaged');
    const result = await orders(['logout'], { ORDERS_CLI_CONFIG_DIR: configDir });
    expect(result.code).toBe(0);
    await expect(stat(join(configDir, 'tokens.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('settings', () => {
  it('flags win over the environment, which wins over the defaults', () => {
    const env = {
      ORDERS_ISSUER: 'https://env.example',
      ORDERS_CLIENT_ID: 'env-client',
      ORDERS_API_URL: 'https://api.env.example',
    };
    expect(resolveSettings({}, {})).toMatchObject({
      issuerId: 'http://localhost:4000',
      clientId: 'orders-cli',
      apiUrl: new URL('http://localhost:3000'),
    });
    expect(resolveSettings({}, env)).toMatchObject({
      issuerId: 'https://env.example',
      clientId: 'env-client',
      apiUrl: new URL('https://api.env.example'),
    });
    expect(
      resolveSettings(
        {
          issuer: 'https://flag.example/tenant',
          'client-id': 'flag-client',
          'api-url': 'http://127.0.0.1:3001',
        },
        env,
      ),
    ).toMatchObject({
      issuerId: 'https://flag.example/tenant',
      clientId: 'flag-client',
      apiUrl: new URL('http://127.0.0.1:3001'),
    });
  });

  it('allows plain http only for this machine', () => {
    for (const issuer of ['http://localhost:4000', 'http://127.0.0.1:4000', 'http://[::1]:4000']) {
      expect(resolveSettings({ issuer }, {}).issuer.protocol).toBe('http:');
    }
    expect(() => resolveSettings({ issuer: 'http://10.0.0.1:4000' }, {})).toThrow(CliError);
  });

  it('keeps tokens in ORDERS_CLI_CONFIG_DIR, else $XDG_CONFIG_HOME/orders-cli, else ~/.config/orders-cli', () => {
    expect(configDirectory({ ORDERS_CLI_CONFIG_DIR: '/x/y', XDG_CONFIG_HOME: '/xdg' })).toBe('/x/y');
    expect(configDirectory({ XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/orders-cli');
    expect(configDirectory({ XDG_CONFIG_HOME: '' })).toBe(join(homedir(), '.config', 'orders-cli'));
  });
});

describe('token store', () => {
  it('writes tokens.json 0600 in a new 0700 directory, atomically (no temporary file left)', async () => {
    const configDir = join(await tempDir(), 'nested', 'orders-cli');
    const store = createTokenStore(configDir);
    const previousUmask = process.umask(0o000);
    try {
      await store.write(session());
    } finally {
      process.umask(previousUmask);
    }
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    expect(await readdir(configDir)).toEqual(['tokens.json']);
    expect(JSON.parse(await readFile(store.file, 'utf8'))).toEqual(session());
    expect(await store.read()).toEqual(session());
  });

  it('replaces the file as a whole and keeps 0600 when it existed with other permissions', async () => {
    const configDir = await tempDir();
    const store = createTokenStore(configDir);
    await writeFile(store.file, 'old', { mode: 0o644 });
    await store.write(session({ accessToken: 'new' }));
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await store.read())?.accessToken).toBe('new');
  });

  it('reads null when there is no file; remove is idempotent', async () => {
    const store = createTokenStore(await tempDir());
    expect(await store.read()).toBeNull();
    expect(await store.remove()).toBe(false);
    await store.write(session());
    expect(await store.remove()).toBe(true);
    expect(await store.read()).toBeNull();
  });

  it('the refresh lock lets one holder in at a time', async () => {
    const store = createTokenStore(await tempDir());
    const events: string[] = [];
    const hold = (name: string) =>
      store.withRefreshLock(async () => {
        events.push(`${name} in`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        events.push(`${name} out`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect(events).toHaveLength(4);
    expect(events[0]!.endsWith('in')).toBe(true);
    expect(events[1]!.endsWith('out')).toBe(true);
    expect(events[0]!.split(' ')[0]).toBe(events[1]!.split(' ')[0]);
  });

  it('a lock left behind by a dead process is taken over after 30 s', async () => {
    const configDir = await tempDir();
    const store = createTokenStore(configDir);
    await writeFile(join(configDir, 'refresh.lock'), '');
    const old = new Date(Date.now() - 60_000);
    await utimes(join(configDir, 'refresh.lock'), old, old);
    await expect(store.withRefreshLock(async () => 'ran')).resolves.toBe('ran');
    await expect(stat(join(configDir, 'refresh.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('network error classification', () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    [
      'a refused connection inside fetch failed',
      new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') }),
    ],
    ['an unknown host', withCode('ENOTFOUND')],
    ['a timeout', new DOMException('timed out', 'TimeoutError')],
    [
      'a wrapped refusal',
      new Error('outer', { cause: new TypeError('fetch failed', { cause: withCode('ECONNRESET') }) }),
    ],
  ])('%s is unreachable', (_case, error) => {
    expect(isNetworkError(error)).toBe(true);
  });

  it.each([
    ['a plain error', new Error('boom')],
    ['a file error', withCode('ENOENT')],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_case, error) => {
    expect(isNetworkError(error)).toBe(false);
  });
});
