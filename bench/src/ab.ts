/**
 * Interleaved A/B of auth-server builds: the way to see a change of a few µs per request on a
 * machine whose speed drifts by ±50 % from one minute to the next (bench/README.md "Measuring a
 * change of a few µs on this machine").
 *
 *   pnpm --filter bench run ab -- before=/tmp/before/apps/auth-server/dist/server.js \
 *     after=../apps/auth-server/dist/server.js --workloads=cc-jwt,introspect --rounds=8 --floor
 *
 * Every build runs at once, each on its own fresh PostgreSQL database, all pinned to one core with
 * the load generator on the other (as `pnpm bench --pin`); an idle server costs nothing. Each round
 * measures every workload on every build back to back (the order alternates between rounds), so the
 * machine's drift hits the builds alike. The CPU per 2xx is read from /proc as in the harness, and
 * the summary gives the median and the minimum of the rounds: the minimum is the least disturbed
 * reading. `--floor` adds the bare Fastify ceilings (`http-ceiling`, `token-floor`) to every round.
 * A build is an esbuild bundle (`node scripts/bundle-server.mjs <app dir>`) next to its own `src/`,
 * `drizzle/` and `node_modules/`: a `git worktree` of the other commit, installed and bundled.
 * `--traced=label,…` starts those builds with OTEL_EXPORTER_OTLP_ENDPOINT set to an OTLP/HTTP sink
 * of the harness that accepts and drops every export: the cost of tracing, export included. The
 * same bundle may be named twice (`off=… on=… --traced=on`). `--postgres` also reads the CPU of
 * the PostgreSQL backends connected to each build's database (as the harness's `postgres` column)
 * and prints it per 2xx beside the server's. `refresh` rotates chains minted through the sign-in
 * pages before the warm-up and again before the measured run (bench's `refresh` workload).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { connectAdmin, type DatabaseAdmin, DEFAULT_ADMIN_URL } from './databases.js';
import { pinHarness } from './pinning.js';
import { readCpuMs } from './proc.js';
import { freePort, type ServerProcess, startServer } from './processes.js';
import { type BenchIdentities, newIdentities, writeSeedFile } from './seed.js';
import { BENCH_DIR } from './targets.js';
import { codeWorkload } from './workloads/code.js';
import { refreshWorkload } from './workloads/refresh.js';
import { type AuthTarget, loadDiscovery } from './workloads/types.js';

export const AB_WORKLOADS = [
  'cc-jwt',
  'cc-opaque',
  'introspect',
  'introspect-distinct',
  'refresh',
  'code',
  'discovery',
  'jwks',
  'live',
] as const;
const FLOOR_WORKLOADS = ['http-ceiling', 'token-floor'] as const;
type AbWorkload = (typeof AB_WORKLOADS)[number] | (typeof FLOOR_WORKLOADS)[number];

export interface AbOptions {
  builds: { label: string; entry: string }[];
  workloads: AbWorkload[];
  rounds: number;
  seconds: number;
  connections: number;
  floor: boolean;
  /** Labels of the builds started with tracing on (exporting to the harness's sink). */
  traced: string[];
  /** Also the CPU of the PostgreSQL backends serving each build, per 2xx. */
  postgres: boolean;
}

/** `label=path` builds and `--name=value` options; throws with a usage line on anything else. */
export function parseAbArguments(argv: readonly string[]): AbOptions {
  const options: AbOptions = {
    builds: [],
    workloads: ['cc-jwt'],
    rounds: 6,
    seconds: 3,
    connections: 32,
    floor: false,
    traced: [],
    postgres: false,
  };
  for (const argument of argv) {
    const option = /^--([a-z]+)(?:=(.*))?$/.exec(argument);
    if (option) {
      const [, name, value = ''] = option;
      if (name === 'floor') options.floor = true;
      else if (name === 'postgres') options.postgres = true;
      else if (name === 'workloads') options.workloads = value.split(',').map(knownWorkload);
      else if (name === 'traced') options.traced = value.split(',');
      else if (name === 'rounds' || name === 'seconds' || name === 'connections')
        options[name] = positive(name, value);
      else throw new Error(`unknown option --${name}`);
      continue;
    }
    const build = /^([\w.-]+)=(.+\.js)$/.exec(argument);
    if (!build?.[1] || !build[2]) throw new Error(`expected label=path/to/dist/server.js, got "${argument}"`);
    options.builds.push({ label: build[1], entry: resolve(build[2]) });
  }
  if (options.builds.length === 0) throw new Error('name at least one build: label=path/to/dist/server.js');
  const unknown = options.traced.filter((label) => !options.builds.some((build) => build.label === label));
  if (unknown.length > 0) throw new Error(`--traced names no build: ${unknown.join(', ')}`);
  return options;
}

function knownWorkload(name: string): AbWorkload {
  if ((AB_WORKLOADS as readonly string[]).includes(name)) return name as AbWorkload;
  throw new Error(`unknown workload ${name} (one of ${AB_WORKLOADS.join(', ')})`);
}

function positive(name: string, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0) throw new Error(`--${name} must be a positive integer`);
  return number;
}

/** Median and minimum of each series of readings. */
export function summariseRounds(readings: ReadonlyMap<string, readonly number[]>): string[] {
  return [...readings].map(([key, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const median =
      sorted.length % 2 === 1
        ? (sorted[(sorted.length - 1) / 2] ?? 0)
        : ((sorted[sorted.length / 2 - 1] ?? 0) + (sorted[sorted.length / 2] ?? 0)) / 2;
    return `${key.padEnd(36)} median ${median.toFixed(1)} µs  min ${(sorted[0] ?? 0).toFixed(1)} µs  rounds ${values.map((value) => value.toFixed(0)).join(' ')}`;
  });
}

interface Target {
  label: string;
  server: ServerProcess;
  workloads: readonly AbWorkload[];
  /** The build's own database (none for the floor). */
  database?: string;
}

type AutocannonRequest = {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
};

/** The web client's redirect URI in the seed; the sign-ins of `refresh` stop at it (nothing listens). */
const AB_REDIRECT_URI = 'http://127.0.0.1:1/signin-oidc';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** The request of a workload; introspection gets a fresh opaque token from the same server. */
async function requestFor(
  workload: Exclude<AbWorkload, 'refresh' | 'code' | 'introspect-distinct'>,
  baseUrl: string,
  ids: BenchIdentities,
): Promise<AutocannonRequest> {
  const client = { ...FORM, authorization: basic(ids.ccClient.id, ids.ccClient.secret) };
  const jwtBody = `grant_type=client_credentials&scope=${ids.jwtResource.scope}&resource=${ids.jwtResource.id}`;
  const opaqueBody = `grant_type=client_credentials&scope=${ids.opaqueResource.scope}&resource=${ids.opaqueResource.id}`;
  switch (workload) {
    case 'cc-jwt':
      return { method: 'POST', path: '/token', headers: client, body: jwtBody };
    case 'cc-opaque':
      return { method: 'POST', path: '/token', headers: client, body: opaqueBody };
    case 'introspect': {
      const response = await fetch(`${baseUrl}/token`, { method: 'POST', headers: client, body: opaqueBody });
      const { access_token: token } = (await response.json()) as { access_token: string };
      const resource = { ...FORM, authorization: basic(ids.opaqueResource.id, ids.opaqueResource.secret) };
      return { method: 'POST', path: '/introspect', headers: resource, body: `token=${token}` };
    }
    case 'discovery':
      return { method: 'GET', path: '/.well-known/openid-configuration' };
    case 'jwks':
      return { method: 'GET', path: '/jwks' };
    case 'live':
      return { method: 'GET', path: '/health/live' };
    case 'http-ceiling':
      return { method: 'GET', path: '/hello' };
    case 'token-floor':
      return { method: 'POST', path: '/token-floor', headers: FORM, body: jwtBody };
  }
}

/** autocannon options of one load of `workload`; `refresh` mints fresh chains and `code` fresh codes for each load. */
async function loadOptionsFor(
  workload: AbWorkload,
  target: Target,
  ids: BenchIdentities,
  connections: number,
  seconds: number,
): Promise<autocannon.Options> {
  const baseUrl = target.server.baseUrl;
  if (workload === 'introspect-distinct') return introspectDistinct(baseUrl, ids, connections);
  if (workload !== 'refresh' && workload !== 'code')
    return { url: baseUrl, requests: [await requestFor(workload, baseUrl, ids)] };
  const { url, document } = await loadDiscovery(baseUrl);
  const authTarget: AuthTarget = {
    issuer: baseUrl,
    discoveryUrl: url,
    tokenEndpoint: document.token_endpoint,
    introspectionEndpoint: document.introspection_endpoint,
    jwksUri: document.jwks_uri,
    ccClient: ids.ccClient,
    introspector: { id: ids.opaqueResource.id, secret: ids.opaqueResource.secret },
    jwtResource: ids.jwtResource,
    opaqueResource: ids.opaqueResource,
    codeFlow: {
      authorizationEndpoint: document.authorization_endpoint,
      tokenEndpoint: document.token_endpoint,
      client: ids.webClient,
      redirectUri: AB_REDIRECT_URI,
      scope: ids.webScope,
      user: ids.user,
    },
  };
  // `code` spends codes issued through the pages before the load: enough for `seconds` at the
  // rate the two cores reach (a load that runs out answers 400s, which count in no reading).
  const plan =
    workload === 'refresh'
      ? await refreshWorkload(authTarget).plan({ phase: 'measure', seconds: 0, connections })
      : await codeWorkload(authTarget).plan({
          phase: 'measure',
          seconds,
          connections,
          expectedRps: CODE_RATE,
        });
  return plan.options;
}

/** Code exchanges per second a pool is sized for in `ab` (what this machine reaches when busy). */
const CODE_RATE = 400;

/**
 * `introspect-distinct`: as `introspect`, but every connection introspects a token of its own, so the
 * lookups that share a statement ask for distinct keys (`introspect` asks for one token throughout).
 */
async function introspectDistinct(
  baseUrl: string,
  ids: BenchIdentities,
  connections: number,
): Promise<autocannon.Options> {
  const requests = await Promise.all(
    Array.from({ length: connections }, () => requestFor('introspect', baseUrl, ids)),
  );
  let next = 0;
  return {
    url: baseUrl,
    setupClient(client: autocannon.Client) {
      client.setRequests([requests[next++ % requests.length]!]);
    },
  };
}

/** CPU ms so far of the PostgreSQL backends connected to `database` (a new backend counts from 0). */
async function readBackendCpu(admin: DatabaseAdmin, database: string): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  for (const pid of await admin.backendPids([database])) {
    const ms = await readCpuMs(pid);
    if (ms !== undefined) cpu.set(pid, ms);
  }
  return cpu;
}

function backendCpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** One reading: a second of warm-up, then `seconds` of load; server CPU (µs) per 2xx answer. */
async function measure(
  target: Target,
  workload: AbWorkload,
  ids: BenchIdentities,
  options: AbOptions,
  admin: DatabaseAdmin,
) {
  const load = async (duration: number) =>
    autocannon({
      ...(await loadOptionsFor(workload, target, ids, options.connections, duration)),
      connections: options.connections,
      duration,
    });
  await load(1);
  const database = options.postgres ? target.database : undefined;
  const measuredLoad = await loadOptionsFor(workload, target, ids, options.connections, options.seconds);
  const pgBefore = database ? await readBackendCpu(admin, database) : undefined;
  const before = await readCpuMs(target.server.pid);
  const result = await autocannon({
    ...measuredLoad,
    connections: options.connections,
    duration: options.seconds,
  });
  const after = await readCpuMs(target.server.pid);
  const pgAfter = database ? await readBackendCpu(admin, database) : undefined;
  if (before === undefined || after === undefined) throw new Error(`${target.label}: no CPU reading`);
  if (result['2xx'] === 0) throw new Error(`${target.label} ${workload}: no 2xx answer`);
  return {
    cpuUs: ((after - before) * 1000) / result['2xx'],
    postgresUs: pgBefore && pgAfter ? (backendCpuDelta(pgBefore, pgAfter) * 1000) / result['2xx'] : undefined,
    okRps: result['2xx'] / options.seconds,
    non2xx: result.non2xx,
  };
}

/** An OTLP/HTTP endpoint that answers every export with 200 and keeps nothing. */
async function startOtlpSink(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sink = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((done) => sink.listen(0, '127.0.0.1', done));
  const { port } = sink.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise((done) => sink.close(() => done())),
  };
}

async function startTargets(
  options: AbOptions,
  ids: BenchIdentities,
  dir: string,
  cpu: number | undefined,
  otlpEndpoint: string,
) {
  const admin = await connectAdmin(process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL);
  const seedFile = await writeSeedFile(dir, ids, AB_REDIRECT_URI, { idTokenAlg: 'ES256' });
  const stamp = `ab${Date.now()}`;
  const targets: Target[] = [];
  const logDir = join(dir, 'logs');
  const ours = options.workloads.filter(
    (workload) => !(FLOOR_WORKLOADS as readonly string[]).includes(workload),
  );
  for (const [index, build] of options.builds.entries()) {
    const port = await freePort();
    const database = `${stamp}_${index}`;
    const databaseUrl = await admin.create(database);
    const server = await startServer({
      name: build.label,
      // The app directory: a bundle resolves src/, drizzle/ and public/ from beside its dist folder.
      cwd: dirname(dirname(build.entry)),
      entry: join(basename(dirname(build.entry)), basename(build.entry)),
      port,
      ...(cpu === undefined ? {} : { cpu }),
      nodeFlags: ['--max-semi-space-size=4', '--max-old-space-size=96'],
      logDir,
      env: {
        PORT: String(port),
        HOST: '127.0.0.1',
        ISSUER: `http://127.0.0.1:${port}`,
        DATABASE_URL: databaseUrl,
        SEED_FILE: seedFile,
        KEY_ENCRYPTION_KEY: ids.keyEncryptionKey,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        SHUTDOWN_PAUSE_MS: '0',
        // The sign-ins that mint `refresh`'s chains come from one address (as in targets.ts).
        LOGIN_MAX_FAILURES_PER_USERNAME: '0',
        LOGIN_MAX_FAILURES_PER_IP: '0',
        ...(options.traced.includes(build.label) ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint } : {}),
      },
    });
    targets.push({ label: build.label, server, workloads: ours, database });
  }
  if (options.floor) {
    const port = await freePort();
    const server = await startServer({
      name: 'bare-fastify',
      cwd: BENCH_DIR,
      entry: 'src/peers/bare-fastify.ts',
      port,
      ...(cpu === undefined ? {} : { cpu }),
      env: { PORT: String(port), NODE_ENV: 'production' },
      logDir,
    });
    targets.push({ label: 'bare-fastify', server, workloads: FLOOR_WORKLOADS });
  }
  return { targets, admin };
}

async function main(): Promise<void> {
  const options = parseAbArguments(process.argv.slice(2).filter((argument) => argument !== '--'));
  const plan = await pinHarness();
  console.log(
    plan.pinned
      ? `pinned: servers on CPU ${plan.serverCpu}, load on CPU ${plan.loadCpu}`
      : `unpinned: ${plan.reason}`,
  );
  const ids = newIdentities();
  const dir = await mkdtemp(join(tmpdir(), 'bench-ab-'));
  const sink = await startOtlpSink();
  const { targets, admin } = await startTargets(
    options,
    ids,
    dir,
    plan.pinned ? plan.serverCpu : undefined,
    sink.endpoint,
  );
  const readings = new Map<string, number[]>();
  try {
    const workloads: AbWorkload[] = [...options.workloads, ...(options.floor ? FLOOR_WORKLOADS : [])];
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const workload of workloads) {
        for (const target of order.filter((candidate) => candidate.workloads.includes(workload))) {
          const reading = await measure(target, workload, ids, options, admin);
          const key = `${workload} ${target.label}`;
          readings.set(key, [...(readings.get(key) ?? []), reading.cpuUs]);
          if (reading.postgresUs !== undefined) {
            const pgKey = `${key} postgres`;
            readings.set(pgKey, [...(readings.get(pgKey) ?? []), reading.postgresUs]);
          }
          const pg =
            reading.postgresUs === undefined ? '' : `, postgres ${reading.postgresUs.toFixed(1)} µs/2xx`;
          console.log(
            `round ${round + 1} ${key}: ${reading.cpuUs.toFixed(1)} µs/2xx${pg}, ${Math.round(reading.okRps)} 2xx/s, ${reading.non2xx} non-2xx`,
          );
        }
      }
    }
    console.log(
      `\nserver (and, with --postgres, its PostgreSQL backends') CPU per 2xx over ${options.rounds} rounds of ${options.seconds} s:`,
    );
    for (const line of summariseRounds(readings)) console.log(line);
  } finally {
    for (const target of targets) await target.server.stop();
    await admin.dropAll();
    await sink.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(BENCH_DIR, 'src/ab.ts')) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(2);
    },
  );
}
