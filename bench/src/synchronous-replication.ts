/**
 * What synchronous replication costs a refresh rotation: `pnpm --filter bench run synchronous-replication`.
 * Two three-node Patroni clusters behind HAProxy (service-kit's fixture), one with
 * `synchronous_mode: true`, one with `false`, each with its own auth server. `--rotations` refresh
 * rotations per mode are sent one after the other (each with the previous answer's token), then the
 * same count over `--concurrency` chains in parallel. The two modes take turns in blocks of
 * `--block` rotations, so a machine whose load changes during the run (a shared one) weighs on
 * both alike. Prints, per mode and phase, the latency of a rotation (p50 / p95, ms) and the CPU
 * time per rotation of the auth server and of all PostgreSQL processes of its cluster (the leader's
 * backends and WAL senders, the standbys' WAL receivers and startup processes, from /proc), plus
 * `uptime` for the conditions.
 *
 *   --rotations=N    rotations per phase (default 300)
 *   --concurrency=N  parallel chains in the second phase (default 8)
 *   --block=N        rotations per turn of one mode (default 20)
 *
 * Needs Debian's patroni, etcd-server, haproxy and postgresql (deploy/ci/system-packages.json).
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  type PatroniCluster,
  startAuthServer,
  startPatroniCluster,
  withPostgresClient,
} from '../../packages/service-kit/src/testing/index.js';
import { authorizeThroughPages, CookieJar, exchangeCode, postForm } from './oauth-flow.js';
import { readCpuMs } from './proc.js';

const { values } = parseArgs({
  options: { rotations: { type: 'string' }, concurrency: { type: 'string' }, block: { type: 'string' } },
});
const ROTATIONS = Number(values.rotations ?? 300);
const CONCURRENCY = Number(values.concurrency ?? 8);
const BLOCK = Number(values.block ?? 20);
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const client = { id: 'bench-web', secret: 'bench-web-secret-0123456789abcdef' };
const user = { username: 'bench', password: 'bench-password-0123456789' };

const seed = {
  clients: [
    {
      client_id: client.id,
      client_secret: client.secret,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'openid offline_access',
      skip_consent: true,
    },
  ],
  users: [{ sub: 'u-bench', username: user.username, password: user.password, name: 'Bench' }],
};

/** Every PID under the postmasters (one level: backends, WAL sender/receiver, checkpointer …) and themselves. */
async function postgresProcesses(postmasters: number[]): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (postmasters.includes(parent)) children.push(Number(entry));
  }
  return [...postmasters, ...children];
}

async function cpuMs(pids: number[]): Promise<number> {
  const each = await Promise.all(pids.map((pid) => readCpuMs(pid)));
  return each.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function signIn(issuer: string): Promise<string> {
  const settings = {
    authorizationEndpoint: `${issuer}/authorize`,
    tokenEndpoint: `${issuer}/token`,
    client,
    redirectUri: REDIRECT_URI,
    scope: 'openid offline_access',
    user,
  };
  const tokens = await exchangeCode(settings, await authorizeThroughPages(settings, new CookieJar()));
  if (!tokens.refresh_token) throw new Error('no refresh token');
  return tokens.refresh_token;
}

/** Rotates `chain.token` `count` times in a row, keeping the newest token; the latency of each, ms. */
async function rotateChain(issuer: string, chain: { token: string }, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const began = performance.now();
    const answer = await postForm(
      `${issuer}/token`,
      { grant_type: 'refresh_token', refresh_token: chain.token },
      client,
    );
    latencies.push(performance.now() - began);
    if (answer.status !== 200) throw new Error(`refresh answered ${answer.status}: ${answer.body}`);
    chain.token = (JSON.parse(answer.body) as { refresh_token: string }).refresh_token;
  }
  return latencies;
}

/** One mode's cluster and auth server, its chains, and what its rotations measured so far. */
interface Target {
  synchronousMode: boolean;
  cluster: PatroniCluster;
  auth: Awaited<ReturnType<typeof startAuthServer>>;
  authPid: number;
  sequential: { token: string };
  parallel: Array<{ token: string }>;
}

interface Tally {
  latencies: number[];
  authCpuMs: number;
  postgresCpuMs: number;
  seconds: number;
}

async function startTarget(synchronousMode: boolean): Promise<Target> {
  const cluster = await startPatroniCluster({ synchronousMode });
  let auth: Target['auth'] | undefined;
  try {
    await withPostgresClient(cluster.url(), (admin) => admin.query('create database auth'));
    const started = await startAuthServer({
      seed,
      database: { url: cluster.url('auth') },
      env: { NODE_ENV: 'production', LOGIN_MAX_FAILURES_PER_USERNAME: '0', LOGIN_MAX_FAILURES_PER_IP: '0' },
    });
    auth = started;
    // One chain to warm up (JIT, pool, statement plans), one for the sequential phase, the rest in parallel.
    const [warmUp, sequential, ...parallel] = await Promise.all(
      Array.from({ length: CONCURRENCY + 2 }, async () => ({ token: await signIn(started.issuer) })),
    );
    await rotateChain(started.issuer, warmUp!, 30);
    const authPid = started.process().child.pid!;
    return { synchronousMode, cluster, auth: started, authPid, sequential: sequential!, parallel };
  } catch (error) {
    await auth?.stop();
    await cluster.stop();
    throw error;
  }
}

/** One turn: `run` on `target`, its latencies and the CPU its processes spent added to `tally`. */
async function turn(target: Target, tally: Tally, run: () => Promise<number[]>): Promise<void> {
  // Listed again each turn: a connection the pool opened since has a backend of its own.
  const postgres = await postgresProcesses(await target.cluster.postmasterPids());
  const before = { auth: await cpuMs([target.authPid]), postgres: await cpuMs(postgres) };
  const began = performance.now();
  tally.latencies.push(...(await run()));
  tally.seconds += (performance.now() - began) / 1000;
  tally.authCpuMs += (await cpuMs([target.authPid])) - before.auth;
  tally.postgresCpuMs += (await cpuMs(postgres)) - before.postgres;
}

function report(target: Target, phase: string, tally: Tally): void {
  const sorted = [...tally.latencies].sort((a, b) => a - b);
  const count = sorted.length;
  console.log(
    `synchronous_mode=${target.synchronousMode} ${phase}: ${count} rotations, p50 ${percentile(sorted, 0.5).toFixed(1)} ms, ` +
      `p95 ${percentile(sorted, 0.95).toFixed(1)} ms, ${(count / tally.seconds).toFixed(0)}/s, CPU per rotation: ` +
      `auth server ${(tally.authCpuMs / count).toFixed(2)} ms, PostgreSQL (3 nodes) ${(tally.postgresCpuMs / count).toFixed(2)} ms`,
  );
}

/** Both phases, the modes taking turns block by block. */
async function measure(targets: Target[]): Promise<void> {
  const blocks = Math.ceil(ROTATIONS / BLOCK);
  const perChain = Math.max(1, Math.round(BLOCK / CONCURRENCY));
  const phases = {
    sequential: (target: Target) => rotateChain(target.auth.issuer, target.sequential, BLOCK),
    [`${CONCURRENCY} chains in parallel`]: async (target: Target) =>
      (
        await Promise.all(target.parallel.map((chain) => rotateChain(target.auth.issuer, chain, perChain)))
      ).flat(),
  };
  for (const [phase, run] of Object.entries(phases)) {
    const tallies = targets.map(
      () => ({ latencies: [], authCpuMs: 0, postgresCpuMs: 0, seconds: 0 }) as Tally,
    );
    for (let block = 0; block < blocks; block++) {
      for (const [index, target] of targets.entries()) await turn(target, tallies[index]!, () => run(target));
    }
    for (const [index, target] of targets.entries()) report(target, phase, tallies[index]!);
  }
}

const uptime = () => execFileSync('uptime').toString().trim();
console.log(
  `rotations per mode and phase: ${ROTATIONS}, in blocks of ${BLOCK}; parallel chains: ${CONCURRENCY}`,
);
const targets: Target[] = [];
try {
  for (const synchronousMode of [true, false]) targets.push(await startTarget(synchronousMode));
  console.log(`before: ${uptime()}`);
  await measure(targets);
  console.log(`after: ${uptime()}`);
} finally {
  for (const target of targets) {
    await target.auth.stop();
    await target.cluster.stop();
  }
}
