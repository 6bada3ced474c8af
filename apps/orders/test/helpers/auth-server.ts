import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { findFreePort } from './server-process.js';

const AUTH_SERVER_DIR = fileURLToPath(new URL('../../../auth-server', import.meta.url));

/** The seed members the orders tests rely on (CONTRACT.md "Seed file"). */
export interface AuthServerSeed {
  clients: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  users: Record<string, unknown>[];
}

/** The real authorization server (apps/auth-server) as a child process on a free port. */
export interface AuthServerProcess {
  readonly issuer: string;
  /** Its DATABASE_URL (`pglite://memory` unless on PostgreSQL). */
  readonly databaseUrl: string;
  /** Everything it printed (pino JSON), for diagnosing a failed test. */
  output(): string;
  /** Stops it (SIGTERM) and starts it again on the same port, database and keys with `seed`. */
  restart(seed: AuthServerSeed): Promise<void>;
  /** Runs `pnpm --filter auth-server users …` (the operator command) as a process on its database. */
  users(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

/** The PostgreSQL server tests that need one use: TEST_DATABASE_URL's, else the local one CI starts. */
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether a file that needs PostgreSQL (another process on the auth server's database) runs here:
 * always under CI (a missing server fails it), else only when the server answers, with a line
 * saying why not (the README's test command must pass with only Node.js and npm).
 */
export async function postgresForThisFile(file: string): Promise<boolean> {
  if (process.env.CI) return true;
  try {
    await runAdminStatement(POSTGRES_ADMIN_URL, 'select 1');
    return true;
  } catch {
    console.warn(`${file}: skipped, needs a PostgreSQL server (or set TEST_DATABASE_URL)`);
    return false;
  }
}

/**
 * Starts `node --import tsx src/server.ts` in apps/auth-server with a seed file written to a temp
 * directory, on pglite://memory, or on a fresh PostgreSQL database when TEST_DATABASE_URL is set
 * or `options.postgres` asks for one (needed by `users` and `restart`, which open the database
 * from another process or keep it across processes). Resolves once discovery answers.
 */
export async function startAuthServer(
  seed: AuthServerSeed,
  options: { postgres?: boolean } = {},
): Promise<AuthServerProcess> {
  const port = await findFreePort();
  const issuer = `http://127.0.0.1:${port}`;
  const directory = await mkdtemp(join(tmpdir(), 'orders-e2e-'));
  const seedFile = join(directory, 'seed.json');
  await writeFile(seedFile, JSON.stringify(seed));

  const adminUrl = process.env.TEST_DATABASE_URL ?? (options.postgres ? POSTGRES_ADMIN_URL : undefined);
  let databaseUrl = 'pglite://memory';
  let dropDatabase = async () => {};
  if (adminUrl) {
    const name = `auth_t_${randomBytes(6).toString('hex')}`;
    await runAdminStatement(adminUrl, `create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = () => runAdminStatement(adminUrl, `drop database if exists ${name} with (force)`);
  }
  const environment = {
    PATH: process.env.PATH ?? '',
    ISSUER: issuer,
    DATABASE_URL: databaseUrl,
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  };

  let output = '';
  let running = await spawnServer({ ...environment, PORT: String(port), SEED_FILE: seedFile }, (chunk) => {
    output += chunk;
  });
  const cleanUp = async () => {
    await dropDatabase();
    await rm(directory, { recursive: true, force: true });
  };
  try {
    await running.ready(issuer, () => output);
  } catch (error) {
    await cleanUp();
    throw error;
  }

  return {
    issuer,
    databaseUrl,
    output: () => output,
    async restart(next) {
      await running.stop();
      await writeFile(seedFile, JSON.stringify(next));
      running = await spawnServer({ ...environment, PORT: String(port), SEED_FILE: seedFile }, (chunk) => {
        output += chunk;
      });
      await running.ready(issuer, () => output);
    },
    users: (args, stdin = '') => runUsersCommand({ ...environment, NODE_ENV: 'production' }, args, stdin),
    async stop() {
      await running.stop();
      await cleanUp();
    },
  };
}

/** One server process: resolves `ready` once discovery answers, `stop` after SIGTERM (SIGKILL after 10 s). */
async function spawnServer(environment: Record<string, string>, collect: (chunk: string) => void) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: AUTH_SERVER_DIR,
    env: {
      ...environment,
      HOST: '127.0.0.1',
      NODE_ENV: 'development',
      SHUTDOWN_PAUSE_MS: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => collect(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => collect(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killTimer);
    }
  };

  const ready = async (issuer: string, output: () => string) => {
    const deadline = Date.now() + 45_000;
    while (true) {
      if (child.exitCode !== null) {
        await stop();
        throw new Error(`the auth server exited during start:\n${output()}`);
      }
      try {
        const response = await fetch(`${issuer}/.well-known/openid-configuration`);
        if (response.ok) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`the auth server did not answer discovery within 45 s:\n${output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { ready, stop };
}

/** `tsx src/cli/users.ts …` in apps/auth-server, as `pnpm --filter auth-server users …` runs it. */
function runUsersCommand(
  environment: Record<string, string>,
  args: string[],
  stdin: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/users.ts', ...args], {
    cwd: AUTH_SERVER_DIR,
    env: environment,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
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
