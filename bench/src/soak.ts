/**
 * The soak run: `pnpm --filter bench run soak` (bench/README.md "Soak"). Both our servers on
 * PostgreSQL under a steady mix (src/soak/mix.ts) at a fixed rate for `--duration` seconds (default
 * 30 minutes); every `--sample` seconds it records each server's RSS (/proc), heap used (its own
 * /metrics, `…nodejs_heap_size_used_bytes`) and the p99 of the window's requests, and every
 * `--gc-every` samples the heap left after a forced full collection (through the inspector,
 * src/soak/inspector.ts). Writes `results/soak-<stamp>.csv`, `.svg` (the plot) and `.json`, and
 * prints each memory series' slope after the warm-up and the verdict (`FLAT_BOUND_MB_PER_HOUR`).
 *
 *   --duration=S   seconds of load (default 1800)
 *   --rate=N       operations started per second (default 20)
 *   --sample=S     seconds between samples (default 10)
 *   --warmup=S     seconds left out of the memory trend (default min(300, duration / 3))
 *   --gc-every=N   samples between two forced full collections (default 6: a minute)
 *   --db=postgres|pglite   (default postgres; PGlite when PostgreSQL is not reachable)
 *
 * Exit status: 0; 1 when a server did not start or exited, no operation succeeded, or more than
 * 1 % of them failed; 2 on a harness error.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectAdmin, type DatabaseAdmin, DEFAULT_ADMIN_URL } from './databases.js';
import { killAllChildrenNow, type ServerProcess } from './processes.js';
import { heapSnapshotFlags, takeHeapSnapshot } from './soak/heap-snapshots.js';
import { heapAfterFullGcMb, InspectorSession, inspectorFlags, inspectorUrl } from './soak/inspector.js';
import { type Answerer, MIX, SoakMix } from './soak/mix.js';
import { describeTrends, memoryFlat, memoryTrends, p99, type SoakSample, toCsv } from './soak/series.js';
import { lineChartsSvg } from './soak/svg.js';
import { BENCH_DIR, type StartContext, type System, startOurs } from './targets.js';

interface SoakOptions {
  seconds: number;
  rate: number;
  sampleSeconds: number;
  warmupSeconds: number;
  gcEverySamples: number;
  db: 'postgres' | 'pglite';
}

function parseOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      duration: { type: 'string' },
      rate: { type: 'string' },
      sample: { type: 'string' },
      warmup: { type: 'string' },
      'gc-every': { type: 'string' },
      db: { type: 'string' },
    },
  });
  const number = (raw: string | undefined, fallback: number, name: string) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const seconds = number(values.duration, 1800, 'duration');
  if (values.db !== undefined && values.db !== 'postgres' && values.db !== 'pglite')
    throw new Error('--db must be postgres or pglite');
  return {
    seconds,
    rate: number(values.rate, 20, 'rate'),
    sampleSeconds: number(values.sample, 10, 'sample'),
    warmupSeconds: values.warmup === undefined ? Math.min(300, seconds / 3) : Number(values.warmup),
    gcEverySamples: Math.round(number(values['gc-every'], 6, 'gc-every')),
    db: values.db === 'pglite' ? 'pglite' : 'postgres',
  };
}

const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The V8 heap in use, from the server's own /metrics (prom-client's default metrics; loopback needs no token). */
async function heapUsedMb(server: ServerProcess, prefix: string): Promise<number> {
  const response = await fetch(`${server.baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const match = new RegExp(`^${prefix}nodejs_heap_size_used_bytes(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(
    text,
  );
  return match ? Math.round((Number(match[1]) / 2 ** 20) * 10) / 10 : 0;
}

/** Latencies of the current window, by who answered; taken and cleared by each sample. */
class Window {
  latencies: Record<Answerer, number[]> = { auth: [], orders: [], 'sign-in': [] };
  requests = 0;
  errors = 0;
  take() {
    const taken = { latencies: this.latencies, requests: this.requests, errors: this.errors };
    this.latencies = { auth: [], orders: [], 'sign-in': [] };
    this.requests = 0;
    this.errors = 0;
    return taken;
  }
}

const MAX_IN_FLIGHT = 64;
/**
 * Access tokens live as long as the auth server's default (`ACCESS_TOKEN_TTL`), not the hour the
 * other workloads need: over 30 minutes the soak should see tokens expire and the orders service's
 * cache of verified tokens settle at the live ones, as in production.
 */
const SOAK_ACCESS_TOKEN_TTL = 300;
/** `SOAK_HEAP_SNAPSHOTS=<dir>`: heap snapshots of the orders service (`soak/heap-snapshots.ts`). */
const SNAPSHOT_DIR = process.env.SOAK_HEAP_SNAPSHOTS;

/** Starts MIX operations at `rate` per second (open loop, bounded in flight) until `stop()`. */
function driveLoad(mix: SoakMix, rate: number, window: Window) {
  const started = performance.now();
  let launched = 0;
  let inFlight = 0;
  let skipped = 0;
  let failuresLogged = 0;
  const launch = () => {
    const operation = MIX[launched++ % MIX.length] ?? 'token';
    inFlight++;
    const begun = performance.now();
    mix
      .run(operation)
      .then(
        (outcome) => {
          window.latencies[outcome.answerer].push(performance.now() - begun);
          window.requests++;
          if (!outcome.ok) window.errors++;
        },
        (error: unknown) => {
          window.requests++;
          window.errors++;
          if (++failuresLogged <= 20) log(`${operation} failed: ${errorText(error)}`);
        },
      )
      .finally(() => inFlight--);
  };
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (launched + skipped < due) {
      if (inFlight >= MAX_IN_FLIGHT) skipped++;
      else launch();
    }
  }, 10);
  return {
    skipped: () => skipped,
    async stop() {
      clearInterval(ticker);
      const until = performance.now() + 20_000;
      while (inFlight > 0 && performance.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}

/** Inspector sessions to both servers, for the heap after a full collection. */
interface Inspectors {
  auth: InspectorSession;
  orders: InspectorSession;
}

async function connectInspectors(system: System): Promise<Inspectors> {
  const [auth, orders] = system.servers;
  if (!auth || !orders) throw new Error('both servers must run');
  return {
    auth: await InspectorSession.connect(await inspectorUrl(auth)),
    orders: await InspectorSession.connect(await inspectorUrl(orders)),
  };
}

/**
 * RSS and heap used first, as the servers are; then, on collection samples, the forced full
 * collections (which would otherwise lower the RSS and heap of this very sample).
 */
async function takeSample(
  system: System,
  window: Window,
  t: number,
  inspectors: Inspectors | undefined,
): Promise<SoakSample> {
  const [auth, orders] = system.servers;
  if (!auth || !orders) throw new Error('both servers must run');
  const { latencies, requests, errors } = window.take();
  const authRssMb = Math.round(((await auth.currentRssBytes()) / 2 ** 20) * 10) / 10;
  const authHeapMb = await heapUsedMb(auth, 'auth_server_');
  const ordersRssMb = Math.round(((await orders.currentRssBytes()) / 2 ** 20) * 10) / 10;
  const ordersHeapMb = await heapUsedMb(orders, 'orders_');
  return {
    t,
    authRssMb,
    authHeapMb,
    authHeapAfterGcMb: inspectors ? await heapAfterFullGcMb(inspectors.auth) : null,
    ordersRssMb,
    ordersHeapMb,
    ordersHeapAfterGcMb: inspectors ? await heapAfterFullGcMb(inspectors.orders) : null,
    authP99Ms: p99(latencies.auth),
    ordersP99Ms: p99(latencies.orders),
    signInP99Ms: p99(latencies['sign-in']),
    requests,
    errors,
  };
}

function plot(samples: readonly SoakSample[], caption: string): string {
  const series = (name: string, color: string, pick: (sample: SoakSample) => number | null) => ({
    name,
    color,
    points: samples.flatMap((sample) => {
      const y = pick(sample);
      return y === null ? [] : [{ x: sample.t / 60, y }];
    }),
  });
  return lineChartsSvg(
    [
      {
        title: 'RSS',
        yLabel: 'MB',
        series: [
          series('auth-server RSS', '#1f77b4', (s) => s.authRssMb),
          series('orders RSS', '#d62728', (s) => s.ordersRssMb),
        ],
      },
      {
        title: 'V8 heap: used when sampled, and left after a forced full collection',
        yLabel: 'MB',
        series: [
          series('auth heap used', '#7fb5e0', (s) => s.authHeapMb),
          series('auth after full GC', '#1f77b4', (s) => s.authHeapAfterGcMb),
          series('orders heap used', '#f19c9c', (s) => s.ordersHeapMb),
          series('orders after full GC', '#d62728', (s) => s.ordersHeapAfterGcMb),
        ],
      },
      {
        title: 'p99 latency per sample window',
        yLabel: 'ms',
        series: [
          series('auth-server request', '#1f77b4', (s) => s.authP99Ms),
          series('orders request', '#d62728', (s) => s.ordersP99Ms),
          series('whole sign-in', '#2ca02c', (s) => s.signInP99Ms),
        ],
      },
    ],
    'minutes since the load started',
    caption,
  );
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2).filter((argument) => argument !== '--'));
  const stamp = new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14);
  const resultsDir = join(BENCH_DIR, 'results');
  let admin: DatabaseAdmin | undefined;
  let db = options.db;
  if (db === 'postgres') {
    try {
      admin = await connectAdmin(process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL);
    } catch (error) {
      log(`PostgreSQL is not reachable (${errorText(error)}): running on PGlite`);
      db = 'pglite';
    }
  }
  const context: StartContext = {
    logDir: join(resultsDir, 'logs', `soak-${stamp}`),
    admin,
    stamp: `soak${stamp}`,
    accessTokenTtl: SOAK_ACCESS_TOKEN_TTL,
    serverNodeFlags: [...inspectorFlags(), ...(SNAPSHOT_DIR ? heapSnapshotFlags(SNAPSHOT_DIR) : [])],
  };
  if (SNAPSHOT_DIR) mkdirSync(SNAPSHOT_DIR, { recursive: true });
  const loadAtStart = loadavg();
  const system = await startOurs(context, db, true);
  try {
    return await soak(system, options, { stamp, resultsDir, db, loadAtStart });
  } finally {
    for (const server of system.servers) await server.stop();
    await system.cleanup?.();
    await admin?.dropAll();
  }
}

async function soak(
  system: System,
  options: SoakOptions,
  run: { stamp: string; resultsDir: string; db: string; loadAtStart: number[] },
): Promise<number> {
  if (system.failures.length > 0 || !system.ours?.auth || !system.ours.orders) {
    for (const failure of system.failures) log(`${failure.server} failed to start: ${failure.detail}`);
    return 1;
  }
  log(
    `${options.seconds} s at ${options.rate} operations/s on ${run.db}, a sample every ${options.sampleSeconds} s, a full collection every ${options.gcEverySamples} samples, warm-up ${options.warmupSeconds} s; load average ${run.loadAtStart.map((v) => v.toFixed(2)).join(' ')}`,
  );
  const inspectors = await connectInspectors(system);
  const window = new Window();
  const load = driveLoad(new SoakMix(system.ours.auth, system.ours.orders), options.rate, window);
  const samples: SoakSample[] = [];
  const started = performance.now();
  for (let next = options.sampleSeconds; next <= options.seconds + 1e-9; next += options.sampleSeconds) {
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, started + next * 1000 - performance.now())),
    );
    const collect = (samples.length + 1) % options.gcEverySamples === 0;
    const sample = await takeSample(
      system,
      window,
      Math.round(next * 10) / 10,
      collect ? inspectors : undefined,
    );
    samples.push(sample);
    if (samples.length % Math.max(1, Math.round(60 / options.sampleSeconds)) === 0 || next >= options.seconds)
      log(`${JSON.stringify(sample)}`);
    if (
      SNAPSHOT_DIR &&
      (Math.abs(next - options.warmupSeconds) < 1e-9 || next + options.sampleSeconds > options.seconds)
    )
      await snapshotOrders(system, SNAPSHOT_DIR);
  }
  await load.stop();
  inspectors.auth.close();
  inspectors.orders.close();
  return report(system, options, run, samples, load.skipped());
}

/** See `soak/heap-snapshots.ts`; with a snapshot the samples after it include its cost. */
async function snapshotOrders(system: System, dir: string): Promise<void> {
  const orders = system.servers[1];
  if (orders)
    log(`orders heap snapshot: ${(await takeHeapSnapshot(orders, dir)) ?? 'not written'} in ${dir}`);
}

function report(
  system: System,
  options: SoakOptions,
  run: { stamp: string; resultsDir: string; db: string; loadAtStart: number[] },
  samples: SoakSample[],
  skipped: number,
): number {
  const trends = memoryTrends(samples, options.warmupSeconds);
  const requests = samples.reduce((sum, sample) => sum + sample.requests, 0);
  const errors = samples.reduce((sum, sample) => sum + sample.errors, 0);
  const loadAtEnd = loadavg();
  const base = join(run.resultsDir, `soak-${run.stamp}`);
  const caption = `${options.seconds / 60} min at ${options.rate} operations/s on ${run.db}; ${requests} operations, ${errors} failed; load average ${run.loadAtStart[0]?.toFixed(1)} at start, ${loadAtEnd[0]?.toFixed(1)} at end`;
  writeFileSync(`${base}.csv`, toCsv(samples));
  writeFileSync(`${base}.svg`, plot(samples, caption));
  writeFileSync(
    `${base}.json`,
    JSON.stringify(
      {
        options,
        db: run.db,
        requests,
        errors,
        skipped,
        loadAtStart: run.loadAtStart,
        loadAtEnd,
        trends,
        memoryFlat: memoryFlat(trends),
        samples,
      },
      null,
      2,
    ),
  );
  for (const line of describeTrends(trends)) log(line);
  log(`${requests} operations, ${errors} failed, ${skipped} skipped (64 in flight); ${caption}`);
  log(`written ${base}.csv, .svg, .json`);
  const gone = system.servers.map((server) => server.unexpectedExit()).filter(Boolean);
  if (gone.length > 0) log(`a server exited: ${gone.join('; ')}`);
  return gone.length > 0 || requests === errors || errors > requests * 0.01 ? 1 : 0;
}

process.on('exit', killAllChildrenNow);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(2);
  },
);
