/**
 * The benchmark CLI: `pnpm bench` (full) and `pnpm --filter bench run smoke`.
 *
 *   --smoke              2 s per workload, one run, 1 s warm-up, PostgreSQL only, targets not evaluated
 *   --only=a,b           run only these workloads (cc-jwt, cc-opaque, introspect, refresh, code,
 *                        discovery, jwks, orders-create, orders-list)
 *   --duration=SECONDS   per measured run (default 10)
 *   --warmup=SECONDS     warm-up before the runs of each workload (default 3)
 *   --runs=N             measured runs per workload (default 2; the PGlite reference runs once)
 *   --connections=N      autocannon connections (default 32)
 *   --db=postgres|pglite|both   which backends our servers run on (default both; smoke: postgres)
 *   --server-node-flags="--max-old-space-size=96"   extra node flags for our servers
 *   --id-token-alg=RS256 the web client's ID Token algorithm in the seed (default ES256, as the
 *                        orders-web client of the shipped seeds and the oidc-provider peer's clients)
 *   --start=bundle|tsx   our servers as `pnpm start` runs them (default: the esbuild bundle on plain
 *                        node, with the start script's node flags) or as `node --import tsx src/server.ts`
 *   --pin                every server on one core, this process (the load generator) on another,
 *                        with taskset; unpinned with a line saying why when taskset or a 2nd core is missing
 *   --profile            run our servers with `node --cpu-prof` (results/profiles/<stamp>/);
 *                        summarise one with `pnpm --filter bench run profile-summary <file>`
 *
 * Exit status: 0 unless the harness itself broke (a server did not start, a workload got no 2xx
 * at all or failed its preflight request). A missed performance target never fails the run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectAdmin, type DatabaseAdmin, DEFAULT_ADMIN_URL } from './databases.js';
import { measureSigningCeilings } from './peers/signing.js';
import { type PinPlan, pinHarness } from './pinning.js';
import { readAllowedCpus, readCpuMs } from './proc.js';
import { killAllChildrenNow } from './processes.js';
import {
  type BenchReport,
  checkTargets,
  formatMarkdown,
  formatText,
  type RssRecord,
  summarize,
} from './report.js';
import {
  type RunRecord,
  runWorkload,
  stopActiveLoad,
  type TargetLabel,
  type WorkloadOutcome,
} from './runner.js';
import { redisServerMissing } from './store/redis-server.js';
import {
  BENCH_DIR,
  type StartContext,
  type System,
  startBareFastify,
  startBarePg,
  startOidcProvider,
  startOurs,
} from './targets.js';
import { type BenchName, WORKLOAD_NAMES, type WorkloadName } from './workloads/types.js';

type Db = 'postgres' | 'pglite';

interface Options {
  mode: 'full' | 'smoke';
  only: Set<WorkloadName>;
  seconds: number;
  warmupSeconds: number;
  runs: number;
  connections: number;
  dbs: Db[];
  profile: boolean;
  pin: boolean;
  serverNodeFlags: string[];
  idTokenAlg: 'RS256' | 'ES256';
  start: 'bundle' | 'tsx';
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      runs: { type: 'string' },
      connections: { type: 'string' },
      db: { type: 'string' },
      profile: { type: 'boolean', default: false },
      pin: { type: 'boolean', default: false },
      'server-node-flags': { type: 'string' },
      'id-token-alg': { type: 'string' },
      start: { type: 'string' },
    },
  });
  const smoke = values.smoke === true;
  const number = (raw: string | undefined, fallback: number, name: string, min: number) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number ≥ ${min}`);
    return value;
  };
  const only = new Set<WorkloadName>();
  for (const name of (values.only ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    if (!(WORKLOAD_NAMES as readonly string[]).includes(name)) {
      throw new Error(`unknown workload ${name}; known: ${WORKLOAD_NAMES.join(', ')}`);
    }
    only.add(name as WorkloadName);
  }
  const db = values.db ?? (smoke ? 'postgres' : 'both');
  if (!['postgres', 'pglite', 'both'].includes(db)) throw new Error('--db must be postgres, pglite or both');
  return {
    mode: smoke ? 'smoke' : 'full',
    only: only.size > 0 ? only : new Set(WORKLOAD_NAMES),
    seconds: number(values.duration, smoke ? 2 : 10, 'duration', 1),
    warmupSeconds: number(values.warmup, smoke ? 1 : 3, 'warmup', 0),
    runs: Math.round(number(values.runs, smoke ? 1 : 2, 'runs', 1)),
    connections: Math.round(number(values.connections, 32, 'connections', 1)),
    dbs: db === 'both' ? ['postgres', 'pglite'] : [db as Db],
    profile: values.profile === true,
    pin: values.pin === true,
    serverNodeFlags: (values['server-node-flags'] ?? '').split(/\s+/).filter(Boolean),
    idTokenAlg: parseIdTokenAlg(values['id-token-alg']),
    start: parseStart(values.start),
  };
}

function parseStart(raw: string | undefined): Options['start'] {
  if (raw === undefined || raw === 'bundle' || raw === 'tsx') return raw ?? 'bundle';
  throw new Error('--start must be bundle or tsx');
}

function parseIdTokenAlg(raw: string | undefined): Options['idTokenAlg'] {
  // ES256 as the orders-web client registers it (scripts/dev.mjs, deploy/seed.example.json) and as
  // the oidc-provider peer's clientDefaults say; RS256, the OIDC default for a client that
  // registers nothing, costs 0.26 ms of RSA per ID Token (bench/README.md).
  if (raw === undefined) return 'ES256';
  if (raw === 'RS256' || raw === 'ES256') return raw;
  throw new Error('--id-token-alg must be RS256 or ES256');
}

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

let admin: DatabaseAdmin | undefined;
const cleanups: (() => Promise<void>)[] = [];
let aborting = false;

async function abort(reason: string, code: number): Promise<never> {
  if (!aborting) {
    aborting = true;
    log(`stopping: ${reason}`);
    stopActiveLoad();
    killAllChildrenNow();
    await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
    await admin?.dropAll();
  }
  process.exit(code);
}

/**
 * Cumulative CPU ms of every process of a system, read before and after each run: its servers, the
 * PostgreSQL backends connected to its databases (`postgres:<pid>`), its store processes (the
 * peer's `redis:<pid>`), and this harness, which runs the load generator.
 */
async function readSystemCpu(system: System): Promise<Map<string, number>> {
  const cpu = new Map<string, number>();
  const own = process.cpuUsage();
  cpu.set('load-generator', (own.user + own.system) / 1000);
  for (const server of system.servers) cpu.set(server.name, await server.cpuMs());
  for (const store of system.stores ?? []) {
    const ms = await readCpuMs(store.pid);
    if (ms !== undefined) cpu.set(`${store.group}:${store.pid}`, ms);
  }
  if (admin && system.databases && system.databases.length > 0) {
    for (const pid of await admin.backendPids(system.databases)) {
      const ms = await readCpuMs(pid);
      if (ms !== undefined) cpu.set(`postgres:${pid}`, ms);
    }
  }
  return cpu;
}

async function pinWithLog(): Promise<PinPlan> {
  const pin = await pinHarness();
  log(
    pin.pinned
      ? `--pin: servers on CPU ${pin.serverCpu}, the load generator (this process) on CPU ${pin.loadCpu}; PostgreSQL unpinned`
      : `--pin: ${pin.reason}`,
  );
  return pin;
}

/** Shows that `--pin` took: the CPUs the kernel lets each server run on. */
async function logAffinity(system: System): Promise<void> {
  for (const server of system.servers) {
    const cpus = await readAllowedCpus(server.pid);
    log(`${server.name} (pid ${server.pid}) may run on CPU ${cpus?.join(',') ?? 'unknown'}`);
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  // Everything stops by itself: a hard limit well above the expected length of the run.
  const limitMs = options.mode === 'smoke' ? 300_000 : 60 * 60_000;
  const watchdog = setTimeout(() => void abort(`time limit of ${limitMs / 1000} s reached`, 3), limitMs);

  const startedAt = new Date();
  const stamp = startedAt
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14);
  const resultsDir = join(BENCH_DIR, 'results');
  const logDir = join(resultsDir, 'logs', stamp);
  mkdirSync(logDir, { recursive: true });

  const adminUrl = process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  let postgresVersion = 'not reachable';
  try {
    admin = await connectAdmin(adminUrl);
    postgresVersion = await admin.serverVersion();
  } catch (error) {
    log(`PostgreSQL is not reachable through BENCH_DATABASE_URL (${errorText(error)})`);
    if (options.dbs.includes('postgres')) {
      log('falling back to PGlite for our servers; the bare-pg ceiling is skipped');
      options.dbs = ['pglite'];
    }
  }
  cleanups.push(async () => admin?.dropAll());

  const pin = options.pin ? await pinWithLog() : undefined;

  const selected = (name: BenchName) =>
    name === 'http-ceiling' ||
    (name === 'token-floor' && options.only.has('cc-jwt')) ||
    options.only.has(name as WorkloadName);
  const report: BenchReport = {
    startedAt: startedAt.toISOString(),
    mode: options.mode,
    settings: {
      connections: options.connections,
      seconds: options.seconds,
      warmupSeconds: options.warmupSeconds,
      runs: options.runs,
      dbs: options.dbs,
      start: options.start,
      idTokenAlg: options.idTokenAlg,
      ...(pin ? { pin } : {}),
    },
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      os: `${type()} ${release()}`,
      node: process.versions.node,
      postgres: postgresVersion,
      loadAverageAtStart: loadavg(),
    },
    outcomes: [],
    signing: [],
    rss: [],
    startFailures: [],
  };
  const records: RunRecord[] = [];
  log(
    `${options.mode} run: ${[...options.only].join(', ')}; ${options.connections} connections, ${options.seconds} s × ${options.runs}, warm-up ${options.warmupSeconds} s; our servers on ${options.dbs.join(' and ')}`,
  );

  if (options.only.has('cc-jwt')) {
    log('measuring the ES256 signing ceiling in-process');
    report.signing = await measureSigningCeilings(options.mode === 'smoke' ? 1 : 3);
  }

  const context: StartContext = {
    logDir,
    admin,
    stamp,
    ...(options.profile ? { profileDir: join(resultsDir, 'profiles', stamp) } : {}),
    serverNodeFlags: options.serverNodeFlags,
    idTokenAlg: options.idTokenAlg,
    start: options.start,
    ...(pin?.pinned ? { serverCpu: pin.serverCpu } : {}),
  };
  const auth: WorkloadName[] = [
    'cc-jwt',
    'cc-opaque',
    'introspect',
    'refresh',
    'code',
    'signin',
    'signin-cheap-hash',
    'discovery',
    'jwks',
  ];
  const providerWorkloads = auth;
  const ordersWorkloads: WorkloadName[] = ['orders-create', 'orders-list'];
  const wants = (names: WorkloadName[]) => names.some((name) => options.only.has(name));

  const systems: { label: TargetLabel; start: () => Promise<System>; runs: number }[] = [];
  if (wants(auth))
    systems.push({ label: 'bare-fastify', start: () => startBareFastify(context), runs: options.runs });
  if (admin && wants(ordersWorkloads))
    systems.push({ label: 'bare-pg', start: () => startBarePg(context), runs: options.runs });
  if (wants(providerWorkloads)) {
    systems.push({
      label: 'oidc-provider',
      start: () => startOidcProvider(context, 'memory'),
      runs: options.runs,
    });
    const redisMissing = redisServerMissing();
    // In CI the Redis peer is mandatory: a missing binary becomes a start failure (exit status 1).
    if (redisMissing && process.env.CI !== 'true') log(`oidc-provider on Redis left out: ${redisMissing}`);
    else
      systems.push({
        label: 'oidc-provider-redis',
        start: () => startOidcProvider(context, 'redis'),
        runs: options.runs,
      });
  }
  for (const db of options.dbs) {
    systems.push({
      label: db === 'postgres' ? 'ours-postgres' : 'ours-pglite',
      start: () => startOurs(context, db, wants(ordersWorkloads)),
      // PGlite is the reference: one run when PostgreSQL is measured too.
      runs: db === 'pglite' && options.dbs.includes('postgres') ? 1 : options.runs,
    });
  }

  for (const { label, start, runs } of systems) {
    if (aborting) break;
    log(`starting ${label}`);
    let system: System;
    try {
      system = await start();
    } catch (error) {
      report.startFailures.push({ server: label, detail: errorText(error) });
      log(`${label} failed to start: ${errorText(error)}`);
      continue;
    }
    if (system.cleanup) cleanups.push(system.cleanup);
    if (pin?.pinned) await logAffinity(system);
    for (const failure of system.failures) {
      report.startFailures.push({ server: failure.server, detail: failure.detail });
      log(`${failure.server} failed to start: ${failure.detail}`);
      for (const workload of failure.workloads.filter(selected)) {
        report.outcomes.push({
          target: label,
          workload,
          status: 'failed',
          detail: `${failure.server} did not start`,
          runs: [],
        });
      }
    }
    try {
      for (const workload of system.workloads.filter((candidate) => selected(candidate.name))) {
        if (aborting) break;
        log(`${label} ${workload.name}`);
        const outcome: WorkloadOutcome = await runWorkload(label, workload, {
          connections: options.connections,
          seconds: options.seconds,
          warmupSeconds: options.warmupSeconds,
          runs,
          log,
          cpuProbe: () => readSystemCpu(system),
          onRecord: (record) => {
            records.push(record);
            process.stdout.write(`${JSON.stringify(record)}\n`);
          },
        });
        const gone = system.servers.filter((server) => server.unexpectedExit() !== undefined);
        if (gone.length > 0 && outcome.status !== 'measured') {
          const why = gone.map((server) => `${server.name} ${server.unexpectedExit()}`).join('; ');
          outcome.detail = `${outcome.detail ?? ''} (${why})`;
          log(`${label}: ${why}`);
        }
        outcome.rssAfterMb = {};
        for (const server of system.servers) {
          outcome.rssAfterMb[server.name] = Math.round((await server.currentRssBytes()) / 2 ** 20);
        }
        report.outcomes.push(outcome);
      }
    } finally {
      for (const server of system.servers) {
        report.rss.push({
          server: server.name,
          readyRssMb: Math.round(server.readyRssBytes() / 2 ** 20),
          maxRssMb: Math.round(server.maxRssBytes() / 2 ** 20),
        } satisfies RssRecord);
        await server.stop();
      }
      await system.cleanup?.();
    }
  }

  await admin?.dropAll();
  admin = undefined;
  report.machine.loadAverageAtEnd = loadavg();

  const rows = summarize(report);
  const checks = checkTargets(report, rows);
  const text = formatText(report, rows, checks);
  const markdown = formatMarkdown(report, rows, checks);
  const json = JSON.stringify({ ...report, summary: rows, targets: checks, runs: records }, null, 2);
  writeFileSync(join(resultsDir, `${stamp}-${options.mode}.json`), json);
  // latest.md is the README's table: only a full run of every workload replaces it.
  const partial = options.only.size < WORKLOAD_NAMES.length;
  const latest = options.mode === 'smoke' ? 'latest-smoke' : partial ? 'latest-partial' : 'latest';
  writeFileSync(join(resultsDir, `${latest}.json`), json);
  writeFileSync(join(resultsDir, `${latest}.md`), markdown);
  process.stdout.write(`\n${text}\n`);
  log(`results in ${resultsDir} (server logs in ${logDir})`);
  clearTimeout(watchdog);

  const broken =
    report.startFailures.length > 0 || report.outcomes.some((outcome) => outcome.status === 'failed');
  if (broken) log('the harness could not measure everything: see the lines above (exit status 1)');
  return broken ? 1 : 0;
}

process.on('exit', killAllChildrenNow);
process.on('SIGINT', () => void abort('SIGINT', 130));
process.on('SIGTERM', () => void abort('SIGTERM', 143));
process.on('unhandledRejection', (error) => void abort(`unhandled rejection: ${errorText(error)}`, 2));

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void abort('harness error', 2);
  },
);
