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
  /** Everything it printed (pino JSON), for diagnosing a failed test. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx src/server.ts` in apps/auth-server with a seed file written to a temp
 * directory, on pglite://memory, or on a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 * Resolves once discovery answers.
 */
export async function startAuthServer(seed: AuthServerSeed): Promise<AuthServerProcess> {
  const port = await findFreePort();
  const issuer = `http://127.0.0.1:${port}`;
  const directory = await mkdtemp(join(tmpdir(), 'orders-e2e-'));
  const seedFile = join(directory, 'seed.json');
  await writeFile(seedFile, JSON.stringify(seed));

  const adminUrl = process.env.TEST_DATABASE_URL;
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

  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
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

  const deadline = Date.now() + 45_000;
  while (true) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the auth server exited during start:\n${output}`);
    }
    try {
      const response = await fetch(`${issuer}/.well-known/openid-configuration`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the auth server did not answer discovery within 45 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { issuer, output: () => output, stop };
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
