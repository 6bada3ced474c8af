import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const AUTH_SERVER_DIR = fileURLToPath(new URL('../../../../apps/auth-server', import.meta.url));
const CLI_DIR = fileURLToPath(new URL('../..', import.meta.url));

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const ORDERS_API = 'orders-api';
export const ALICE = { username: 'alice', password: randomBytes(12).toString('base64url') };

/** The seed of CONTRACT.md's shape: the public `orders-cli` client, the orders API, Alice. */
export function cliSeed(resourceSecret: string) {
  return {
    clients: [
      {
        client_id: 'orders-cli',
        client_name: 'Orders CLI',
        grant_types: [DEVICE_GRANT, 'refresh_token'],
        scope: 'openid profile email offline_access orders.read',
      },
    ],
    resources: [
      {
        id: ORDERS_API,
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: 300,
        secret: resourceSecret,
        claims: ['email'],
      },
    ],
    users: [
      {
        sub: 'u-alice',
        username: ALICE.username,
        password: ALICE.password,
        name: 'Alice Example',
        email: 'alice@example.com',
      },
    ],
  };
}

export async function findFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface AuthServer {
  readonly issuer: string;
  readonly resourceSecret: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * apps/auth-server as a child process (`node --import tsx src/server.ts`) on a free port, seeded
 * with random secrets, on pglite://memory, or on a fresh PostgreSQL database when
 * TEST_DATABASE_URL is set. Resolves once discovery answers.
 */
export async function startAuthServer(env: Record<string, string> = {}): Promise<AuthServer> {
  const port = await findFreePort();
  const issuer = `http://127.0.0.1:${port}`;
  const resourceSecret = randomBytes(24).toString('base64url');
  const directory = await mkdtemp(join(tmpdir(), 'orders-cli-auth-'));
  const seedFile = join(directory, 'seed.json');
  await writeFile(seedFile, JSON.stringify(cliSeed(resourceSecret)), { mode: 0o600 });

  const adminUrl = process.env.TEST_DATABASE_URL;
  let databaseUrl = 'pglite://memory';
  let dropDatabase = async () => {};
  if (adminUrl) {
    const name = `cli_t_${randomBytes(6).toString('hex')}`;
    await runAdminStatement(adminUrl, `create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = () => runAdminStatement(adminUrl, `drop database if exists ${name} with (force)`);
  }

  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: AUTH_SERVER_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      ISSUER: issuer,
      DATABASE_URL: databaseUrl,
      SEED_FILE: seedFile,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
      NODE_ENV: 'development',
      SHUTDOWN_PAUSE_MS: '0',
      LOG_LEVEL: 'warn',
      // Polls every second instead of five: the tests wait less, the protocol is the same.
      DEVICE_CODE_POLL_INTERVAL: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killTimer);
    }
    await dropDatabase();
    await rm(directory, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the auth server exited during start:\n${output}`);
    }
    const ready = await fetch(`${issuer}/.well-known/openid-configuration`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the auth server did not answer discovery within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { issuer, resourceSecret, output: () => output, stop };
}

async function runAdminStatement(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves with the first match in stdout; rejects if the process exits first. */
  waitForStdout(pattern: RegExp): Promise<RegExpExecArray>;
}

/**
 * `orders <args>` as a child process (`node --import tsx src/main.ts`, what bin/orders.js does),
 * with only the given environment. `umask` runs it under that file-creation mask (through sh).
 */
export function startCli(
  args: string[],
  env: Record<string, string>,
  options: { umask?: string } = {},
): CliProcess {
  const command = [process.execPath, '--import', 'tsx', 'src/main.ts', ...args];
  const child =
    options.umask === undefined
      ? spawn(command[0]!, command.slice(1), { cwd: CLI_DIR, env: { PATH: process.env.PATH ?? '', ...env } })
      : spawn('/bin/sh', ['-c', `umask ${options.umask} && exec "$@"`, 'sh', ...command], {
          cwd: CLI_DIR,
          env: { PATH: process.env.PATH ?? '', ...env },
        });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let hasExited = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      hasExited = true;
      for (const listener of listeners) listener();
      resolve(code);
    }),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStdout(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stdout);
          if (match) {
            listeners.delete(check);
            resolve(match);
          } else if (hasExited) {
            listeners.delete(check);
            reject(new Error(`orders exited before printing ${pattern}:\n${stdout}\n${stderr}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Runs `orders <args>` to completion. */
export async function runCli(args: string[], env: Record<string, string>) {
  const cli = startCli(args, env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

export interface OrdersService {
  readonly url: string;
  readonly apiKey: string;
  output(): string;
  stop(): Promise<void>;
}

const ORDERS_DIR = fileURLToPath(new URL('../../../../apps/orders', import.meta.url));

/**
 * apps/orders as a child process, verifying bearer tokens of `issuer` for the `orders-api`
 * resource (apps/orders README), on pglite://memory or its own PostgreSQL database.
 */
export async function startOrdersService(issuer: string, resourceSecret: string): Promise<OrdersService> {
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const apiKey = randomBytes(18).toString('base64url');
  const adminUrl = process.env.TEST_DATABASE_URL;
  let databaseUrl = 'pglite://memory';
  let dropDatabase = async () => {};
  if (adminUrl) {
    const name = `cli_orders_t_${randomBytes(6).toString('hex')}`;
    await runAdminStatement(adminUrl, `create database ${name}`);
    const database = new URL(adminUrl);
    database.pathname = `/${name}`;
    databaseUrl = database.toString();
    dropDatabase = () => runAdminStatement(adminUrl, `drop database if exists ${name} with (force)`);
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ORDERS_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: url,
      DATABASE_URL: databaseUrl,
      API_KEY: apiKey,
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      OIDC_ISSUER: issuer,
      // The service's own sign-in client; `GET /orders` only verifies bearer tokens.
      OIDC_CLIENT_ID: 'orders-web',
      RESOURCE_ID: ORDERS_API,
      RESOURCE_SECRET: resourceSecret,
      SHUTDOWN_PAUSE_MS: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killTimer);
    }
    await dropDatabase();
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the orders service exited during start:\n${output}`);
    }
    const ready = await fetch(`${url}/health/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the orders service was not ready within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, apiKey, output: () => output, stop };
}
