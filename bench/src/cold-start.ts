/**
 * `pnpm --filter bench run cold-start [-- --runs=3]`: the bundled auth server's time from process
 * start (the `spawn` of node on `dist/server.js`, with the `start` script's node flags) to its first
 * 200 on `/health/ready`, on PGlite and on PostgreSQL, with every migration pending (a new, empty
 * database: the first start also generates the signing keys) and with none pending (the same
 * database started again). Prints one Markdown table of medians (min–max) for bench/README.md
 * "Cold start", with the load average. `BENCH_DATABASE_URL` is the admin connection, as for
 * `pnpm bench`; without PostgreSQL the PostgreSQL rows are left out with a line saying so.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectAdmin, type DatabaseAdmin, DEFAULT_ADMIN_URL } from './databases.js';
import { freePort } from './processes.js';

const AUTH_SERVER_DIR = resolve(fileURLToPath(new URL('../../apps/auth-server', import.meta.url)));
const BUNDLER = resolve(AUTH_SERVER_DIR, '../../scripts/bundle-server.mjs');
/** The `start` script's flags (apps/auth-server/package.json). */
const NODE_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=96'];
const READY_POLL_MS = 5;
const READY_TIMEOUT_MS = 60_000;

const RUNS = Number(process.argv.find((arg) => arg.startsWith('--runs='))?.split('=')[1] ?? 3);

/** Milliseconds from spawn to the first 200 of /health/ready; the server is stopped afterwards. */
async function timeToReady(databaseUrl: string): Promise<number> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl,
    KEY_ENCRYPTION_KEY: KEK,
    LOG_LEVEL: 'warn',
    SHUTDOWN_PAUSE_MS: '0',
  };
  const started = performance.now();
  const child = spawn(process.execPath, [...NODE_FLAGS, 'dist/server.js'], {
    cwd: AUTH_SERVER_DIR,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitForReady(`http://127.0.0.1:${port}/health/ready`, child);
    return performance.now() - started;
  } finally {
    await stop(child);
  }
}

async function waitForReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`auth server exited with ${child.exitCode} before ready`);
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((done) => setTimeout(done, READY_POLL_MS));
  }
  throw new Error(`auth server not ready within ${READY_TIMEOUT_MS} ms`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

const KEK = randomBytes(32).toString('base64url');

interface Case {
  label: string;
  /** A new, empty database for one run. */
  fresh(): Promise<string>;
}

/** Per run: a fresh database (all migrations pending), then the same one started again (none). */
async function measure(kind: Case): Promise<{ pending: number[]; migrated: number[] }> {
  const pending: number[] = [];
  const migrated: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const url = await kind.fresh();
    pending.push(await timeToReady(url));
    migrated.push(await timeToReady(url));
  }
  return { pending, migrated };
}

function pgliteCase(folders: string[]): Case {
  return {
    label: 'PGlite (file)',
    async fresh() {
      const folder = await mkdtemp(join(tmpdir(), 'cold-start-pglite-'));
      folders.push(folder);
      return `pglite://${folder}`;
    },
  };
}

function postgresCase(admin: DatabaseAdmin): Case {
  const stamp = Date.now();
  let count = 0;
  return {
    label: 'PostgreSQL',
    fresh: () => admin.create(`cold_start_${stamp}_${count++}`),
  };
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  return `${Math.round(median)} ms (${Math.round(sorted[0] ?? 0)}–${Math.round(sorted.at(-1) ?? 0)})`;
};

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');

async function main(): Promise<void> {
  execFileSync(process.execPath, [BUNDLER, AUTH_SERVER_DIR], { stdio: 'inherit' });
  const loadAtStart = load();
  const folders: string[] = [];
  const rows: string[] = [];
  const admin = await connectAdmin(process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL).catch(
    (error: unknown) => {
      console.error(`[cold-start] PostgreSQL not reachable, its rows are left out: ${String(error)}`);
      return undefined;
    },
  );
  try {
    const cases = [pgliteCase(folders), ...(admin ? [postgresCase(admin)] : [])];
    for (const kind of cases) {
      const { pending, migrated } = await measure(kind);
      rows.push(`| ${kind.label} | ${summary(pending)} | ${summary(migrated)} |`);
    }
  } finally {
    await admin?.dropAll();
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  }
  console.log(`bundled auth server, NODE_ENV=production, ${RUNS} runs each: median (min–max)`);
  console.log('\n| database | every migration pending (new database, keys generated) | none pending |');
  console.log('|---|---:|---:|');
  console.log(rows.join('\n'));
  console.log(`\nload average (1, 5, 15 min): ${loadAtStart} at the start, ${load()} at the end`);
}

await main();
