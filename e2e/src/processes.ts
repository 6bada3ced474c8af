import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A port nothing listens on right now (bound once on loopback, then released). */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves with the first match in stdout; rejects when the process exits first. */
  waitForOutput(pattern: RegExp): Promise<RegExpExecArray>;
  /** The exit code once it has exited (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * `node --import tsx <script>` in `cwd` (relative to the repository root) with exactly `env`
 * (plus PATH): how every service starts in its container and in `pnpm dev`.
 */
export function startNodeProcess(
  name: string,
  cwd: string,
  script: string,
  env: Record<string, string>,
  args: string[] = [],
): ManagedProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: resolve(repositoryRoot, cwd),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let all = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    all += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    all += chunk.toString();
  });
  let hasExited = false;
  const exited = new Promise<number | null>((done) =>
    child.once('exit', (code) => {
      hasExited = true;
      for (const listener of listeners) listener();
      done(code);
    }),
  );
  return {
    name,
    child,
    output: () => all,
    exited,
    waitForOutput(pattern) {
      return new Promise((done, fail) => {
        const check = () => {
          const match = pattern.exec(stdout);
          if (match) {
            listeners.delete(check);
            done(match);
          } else if (hasExited) {
            listeners.delete(check);
            fail(new Error(`${name} exited before printing ${pattern}:\n${all}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killTimer);
    },
  };
}

/** Free ports for the three services of `pnpm dev`, in the variables scripts/dev.mjs reads. */
export async function freeDevPorts(): Promise<Record<'AUTH_PORT' | 'ORDERS_PORT' | 'SPA_PORT', string>> {
  return {
    AUTH_PORT: String(await findFreePort()),
    ORDERS_PORT: String(await findFreePort()),
    SPA_PORT: String(await findFreePort()),
  };
}

/** `pnpm dev` (scripts/dev.mjs) with its data in `dataDir` (DEV_DATA_DIR) and JSON logs (CI). */
export function startDevLauncher(dataDir: string, ports: Record<string, string>): ManagedProcess {
  return startNodeProcess('pnpm dev', '.', 'scripts/dev.mjs', {
    CI: 'true',
    DEV_DATA_DIR: dataDir,
    ...ports,
  });
}

export interface ShellResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `sh -c <command>` at the repository root with exactly `env`, collected without blocking: a
 * process this one also reads (a running `pnpm dev`) keeps logging meanwhile.
 */
export function runShell(command: string, env: Record<string, string>): Promise<ShellResult> {
  const child = spawn('sh', ['-c', command], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (status) => done({ status, stdout, stderr })));
}

/** Polls `url` until `accept(response body)` holds; fails early when the process exits. */
export async function waitUntilReady(
  processHandle: ManagedProcess,
  url: string,
  accept: (body: string) => boolean = () => true,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (processHandle.child.exitCode !== null) {
      throw new Error(`${processHandle.name} exited during start:\n${processHandle.output()}`);
    }
    const ready = await fetch(url).then(
      async (response) => response.ok && accept(await response.text()),
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) {
      throw new Error(`${processHandle.name} was not ready at ${url}:\n${processHandle.output()}`);
    }
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** A database for one run: pglite://memory, or a fresh PostgreSQL database with TEST_DATABASE_URL. */
export interface RunDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createRunDatabase(prefix: string, suffix: string): Promise<RunDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return { url: 'pglite://memory', drop: async () => {} };
  const name = `${prefix}_${suffix}`;
  await runAdminStatement(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => runAdminStatement(adminUrl, `drop database if exists ${name} with (force)`),
  };
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
