import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findFreePort, withPostgresClient as withClient } from '@oidc-orders/service-kit/testing';

/**
 * PostgreSQL for the reliability suites, which need a real server whatever TEST_DATABASE_URL says:
 * - `createFreshDatabase`: a new database on the shared server (TEST_DATABASE_URL, default
 *   postgres://postgres@127.0.0.1:5432/test, used as admin), dropped afterwards;
 * - `createPrivatePostgres`: a server of our own (initdb into a temporary folder, its own port),
 *   started and stopped by the test — never the shared one, which other suites are using.
 */

export {
  createPostgresDatabase as createFreshDatabase,
  POSTGRES_ADMIN_URL as ADMIN_URL,
  type TestDatabaseUrl as FreshDatabase,
  withPostgresClient as withClient,
} from '@oidc-orders/service-kit/testing';

// ─── A private server ───────────────────────────────────────────────────────────────────────────

/** Where initdb, postgres and pg_ctl are: PG_BIN, Debian/Ubuntu's /usr/lib/postgresql/<v>/bin, or PATH. */
export async function postgresBinDir(): Promise<string | undefined> {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = (await readdir(root))
      .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  return undefined;
}

export interface PrivatePostgres {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database?: string): string;
  readonly running: boolean;
  start(): Promise<void>;
  /** Fast shutdown (`pg_ctl stop -m fast`): open connections are cut, in-flight transactions roll back. */
  stop(): Promise<void>;
  /** Stops it if needed and deletes the data folder. */
  destroy(): Promise<void>;
  /** The server's own log, for failure messages. */
  output(): string;
}

/**
 * initdb into a fresh temporary folder and return a handle to start and stop `postgres` on a free
 * port. As root (initdb refuses to run as root) every command runs as the `postgres` OS user via
 * `runuser`, with the folder handed to that user.
 */
export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const binDir = await postgresBinDir();
  const bin = (name: string) => (binDir ? join(binDir, name) : name);
  const asRoot = process.getuid?.() === 0;
  const command = (name: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', bin(name), ...args]] : [bin(name), args];

  const directory = await mkdtemp(join(tmpdir(), 'e2e-private-pg-'));
  const dataDir = join(directory, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    await chown(directory, uid, gid);
  }
  await chmod(directory, 0o700);
  const run = promisify(execFile);
  const [initdb, initdbArgs] = command('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  try {
    await run(initdb, initdbArgs, { timeout: 120_000 });
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw new Error(
      `initdb failed (PostgreSQL server binaries are needed: install postgresql, or set PG_BIN): ${String(error)}`,
    );
  }

  const port = await findFreePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let log = '';
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

  const handle: PrivatePostgres = {
    port,
    url,
    get running() {
      return child !== null;
    },
    async start() {
      if (child !== null) return;
      const [postgres, args] = command('postgres', [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        directory,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
      ]);
      const started = spawn(postgres, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      started.stdout?.on('data', (chunk: Buffer) => {
        log += chunk.toString();
      });
      started.stderr?.on('data', (chunk: Buffer) => {
        log += chunk.toString();
      });
      exited = new Promise((resolve) =>
        started.once('exit', () => {
          if (child === started) child = null;
          resolve();
        }),
      );
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child !== started) throw new Error(`postgres exited during start:\n${log}`);
        const ready = await withClient(url(), (client) => client.query('select 1')).then(
          () => true,
          () => false,
        );
        if (ready) return;
        if (Date.now() > deadline)
          throw new Error(`postgres did not accept connections within 60 s:\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      if (child === null) return;
      const [pgCtl, args] = command('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60']);
      await run(pgCtl, args, { timeout: 90_000 }).catch((error: unknown) => {
        log += `\npg_ctl stop failed: ${String(error)}`;
        child?.kill('SIGINT');
      });
      await exited;
    },
    async destroy() {
      if (child !== null) {
        const [pgCtl, args] = command('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '30']);
        await run(pgCtl, args, { timeout: 60_000 }).catch(() => child?.kill('SIGKILL'));
        await exited;
      }
      await rm(directory, { recursive: true, force: true });
    },
    output: () => log,
  };
  return handle;
}
