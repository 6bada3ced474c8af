/**
 * What synchronous replication costs a refresh rotation: `pnpm --filter bench run synchronous-replication`.
 * For each mode (Patroni `synchronous_mode: true`, then `false`) a fresh three-node Patroni cluster
 * behind HAProxy (service-kit's fixture) and one auth server on it; one user signs in, then
 * `--rotations` refresh rotations are sent one after the other (each with the previous answer's
 * token) and, after that, `--concurrency` chains rotate in parallel for the same count. Prints, per
 * mode, the latency of a rotation (p50 / p95, ms), and the CPU time per rotation of the auth
 * server and of all PostgreSQL processes of the cluster (the leader's backends and WAL senders and
 * the standbys' WAL receivers and startup processes, from /proc), plus `uptime` for the conditions.
 *
 *   --rotations=N    rotations per phase (default 300)
 *   --concurrency=N  parallel chains in the second phase (default 8)
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
  options: { rotations: { type: 'string' }, concurrency: { type: 'string' } },
});
const ROTATIONS = Number(values.rotations ?? 300);
const CONCURRENCY = Number(values.concurrency ?? 8);
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

/** Rotates `token` `count` times in a row; the latency of each, ms. */
async function rotateChain(issuer: string, token: string, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let current = token;
  for (let index = 0; index < count; index++) {
    const began = performance.now();
    const answer = await postForm(
      `${issuer}/token`,
      { grant_type: 'refresh_token', refresh_token: current },
      client,
    );
    latencies.push(performance.now() - began);
    if (answer.status !== 200) throw new Error(`refresh answered ${answer.status}: ${answer.body}`);
    current = (JSON.parse(answer.body) as { refresh_token: string }).refresh_token;
  }
  return latencies;
}

interface PhaseResult {
  p50: number;
  p95: number;
  authCpuMs: number;
  postgresCpuMs: number;
  perSecond: number;
}

async function phase(
  run: () => Promise<number[]>,
  pids: { auth: number; postgres: number[] },
): Promise<PhaseResult> {
  const before = { auth: await cpuMs([pids.auth]), postgres: await cpuMs(pids.postgres) };
  const began = performance.now();
  const latencies = (await run()).sort((a, b) => a - b);
  const seconds = (performance.now() - began) / 1000;
  const after = { auth: await cpuMs([pids.auth]), postgres: await cpuMs(pids.postgres) };
  return {
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    authCpuMs: (after.auth - before.auth) / latencies.length,
    postgresCpuMs: (after.postgres - before.postgres) / latencies.length,
    perSecond: latencies.length / seconds,
  };
}

async function measure(synchronousMode: boolean): Promise<Record<string, PhaseResult>> {
  let cluster: PatroniCluster | undefined;
  let auth: Awaited<ReturnType<typeof startAuthServer>> | undefined;
  try {
    cluster = await startPatroniCluster({ synchronousMode });
    await withPostgresClient(cluster.url(), (admin) => admin.query('create database auth'));
    auth = await startAuthServer({
      seed,
      database: { url: cluster.url('auth') },
      env: { NODE_ENV: 'production', LOGIN_MAX_FAILURES_PER_USERNAME: '0', LOGIN_MAX_FAILURES_PER_IP: '0' },
    });
    const issuer = auth.issuer;
    const authPid = auth.process().child.pid!;
    // One chain to warm up (JIT, pool, statement plans), one for the sequential phase, the rest in parallel.
    const [warmUp, sequential, ...parallel] = await Promise.all(
      Array.from({ length: CONCURRENCY + 2 }, () => signIn(issuer)),
    );
    await rotateChain(issuer, warmUp!, 30);
    const pids = { auth: authPid, postgres: await postgresProcesses(await cluster.postmasterPids()) };
    const perChain = Math.ceil(ROTATIONS / CONCURRENCY);
    return {
      sequential: await phase(() => rotateChain(issuer, sequential!, ROTATIONS), pids),
      [`${CONCURRENCY} in parallel`]: await phase(
        async () => (await Promise.all(parallel.map((token) => rotateChain(issuer, token, perChain)))).flat(),
        pids,
      ),
    };
  } finally {
    await auth?.stop();
    await cluster?.stop();
  }
}

const uptime = () => execFileSync('uptime').toString().trim();
console.log(`rotations per phase: ${ROTATIONS}, parallel chains: ${CONCURRENCY}`);
for (const synchronousMode of [true, false]) {
  console.log(`before (${synchronousMode ? 'synchronous' : 'asynchronous'}): ${uptime()}`);
  const results = await measure(synchronousMode);
  for (const [name, result] of Object.entries(results)) {
    console.log(
      `synchronous_mode=${synchronousMode} ${name}: p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms, ` +
        `${result.perSecond.toFixed(0)}/s, CPU per rotation: auth server ${result.authCpuMs.toFixed(2)} ms, ` +
        `PostgreSQL (3 nodes) ${result.postgresCpuMs.toFixed(2)} ms`,
    );
  }
}
console.log(`after: ${uptime()}`);
