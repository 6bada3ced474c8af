import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './free-port.js';
import { withPostgresClient } from './test-database.js';

/**
 * Debian's PgBouncer in front of a PostgreSQL server, in transaction pooling mode by default: each
 * transaction (or statement outside one) borrows a server connection and gives it back, so a
 * session's state (named prepared statements, SET, session advisory locks, LISTEN) does not
 * follow the client. A small pool (3 server connections per database) makes consecutive
 * statements of one client land on different server connections, as under real load.
 * On loopback, a free port, configuration in a temporary folder; as root (PgBouncer refuses to
 * run as root) it runs as the `postgres` OS user via `setpriv`.
 */

export interface PgBouncerOptions {
  /** The server behind it (`postgres://user@host:port/…`; only host and port are used). */
  serverUrl: string;
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user (default 3). */
  poolSize?: number;
}

export interface PgBouncer {
  readonly port: number;
  /**
   * `postgres://postgres@127.0.0.1:<port>/<database>`, with `?pgbouncer=true` in transaction mode:
   * what the apps' DATABASE_URL says behind a transaction pooler (service-kit's transaction-pooler.ts).
   */
  url(database: string): string;
  output(): string;
  stop(): Promise<void>;
}

function configText(options: PgBouncerOptions, port: number, directory: string): string {
  const server = new URL(options.serverUrl);
  return [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || '5432'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(directory, 'users.txt')}`,
    `pool_mode = ${options.poolMode ?? 'transaction'}`,
    `default_pool_size = ${options.poolSize ?? 3}`,
    'max_client_conn = 500',
    // node-postgres sends none of the others; libpq's `options` stays refused (no session settings).
    'ignore_startup_parameters = extra_float_digits',
    'admin_users = postgres',
    '',
  ].join('\n');
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const directory = await mkdtemp(join(tmpdir(), 'pgbouncer-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
    await chown(directory, id('-u'), id('-g'));
  }
  await chmod(directory, 0o755);
  const port = await findFreePort();
  const config = join(directory, 'pgbouncer.ini');
  await writeFile(config, configText(options, port, directory), { mode: 0o644 });
  await writeFile(join(directory, 'users.txt'), '"postgres" ""\n', { mode: 0o644 });

  const [command, args] = asRoot
    ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', 'pgbouncer', config]]
    : ['pgbouncer', [config]];
  let log = '';
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const append = (chunk: Buffer) => {
    log = `${log}${chunk.toString()}`.slice(-200_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const transaction = (options.poolMode ?? 'transaction') === 'transaction';
  const handle: PgBouncer = {
    port,
    url: (database) =>
      `postgres://postgres@127.0.0.1:${port}/${database}${transaction ? '?pgbouncer=true' : ''}`,
    output: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // PgBouncer's immediate shutdown
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const direct = `postgres://postgres@127.0.0.1:${port}/postgres`;
    if (
      await withPostgresClient(direct, (client) => client.query('select 1')).then(
        () => true,
        () => false,
      )
    )
      break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await handle.stop();
      throw new Error(`PgBouncer did not start (apt-get install pgbouncer):\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return handle;
}
