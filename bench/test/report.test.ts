import { describe, expect, it } from 'vitest';
import {
  type BenchReport,
  CPU_HEADER,
  checkTargets,
  cpuPerOk,
  cpuTableCells,
  formatMarkdown,
  formatText,
  loadGeneratorBusy,
  placementLine,
  ratioOf,
  servingServer,
  summarize,
} from '../src/report.js';
import type { RunRecord, TargetLabel, WorkloadOutcome } from '../src/runner.js';
import type { BenchName } from '../src/workloads/types.js';

function run(target: TargetLabel, workload: BenchName, okRps: number, cpuMsPerOk?: Record<string, number>) {
  return {
    type: 'run',
    target,
    workload,
    run: 1,
    connections: 32,
    seconds: 2,
    responses: okRps * 2,
    okRps,
    rps: okRps,
    p50: 4,
    p99: 12,
    max: 20,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    mismatches: 0,
    statusCodes: { '200': okRps * 2 },
    ...(cpuMsPerOk ? { cpuMsPerOk } : {}),
  } satisfies RunRecord;
}

function measured(target: TargetLabel, workload: BenchName, runs: RunRecord[]): WorkloadOutcome {
  return { target, workload, status: 'measured', runs };
}

function report(outcomes: WorkloadOutcome[], pin?: BenchReport['settings']['pin']): BenchReport {
  return {
    startedAt: '2026-11-23T20:00:00.000Z',
    mode: 'smoke',
    settings: {
      connections: 32,
      seconds: 2,
      warmupSeconds: 1,
      runs: 2,
      dbs: ['postgres'],
      ...(pin ? { pin } : {}),
    },
    machine: {
      cpu: 'test cpu',
      cores: 2,
      memoryGb: 4,
      os: 'Linux',
      node: '20',
      postgres: '15',
      loadAverageAtStart: [0, 0, 0],
    },
    outcomes,
    signing: [{ library: 'node:crypto', signaturesPerSecond: 40_000, signatures: 40_000, seconds: 1 }],
    rss: [],
    startFailures: [],
  };
}

const outcomes: WorkloadOutcome[] = [
  measured('bare-fastify', 'http-ceiling', [
    run('bare-fastify', 'http-ceiling', 50_000, { 'bare-fastify': 0.041 }),
  ]),
  measured('oidc-provider', 'cc-jwt', [run('oidc-provider', 'cc-jwt', 2_000, { 'oidc-provider': 0.43 })]),
  measured('oidc-provider', 'introspect', [
    run('oidc-provider', 'introspect', 2_800, { 'oidc-provider': 0.28 }),
  ]),
  measured('ours-postgres', 'cc-jwt', [
    run('ours-postgres', 'cc-jwt', 3_000, {
      'auth-server-postgres': 0.25,
      'orders-postgres': 0.001,
      postgres: 0,
      'load-generator': 0.09,
    }),
    run('ours-postgres', 'cc-jwt', 4_000, {
      'auth-server-postgres': 0.27,
      'orders-postgres': 0,
      postgres: 0,
    }),
  ]),
  measured('oidc-provider-redis', 'refresh', [
    run('oidc-provider-redis', 'refresh', 900, { 'oidc-provider-redis': 0.7, redis: 0.12 }),
    run('oidc-provider-redis', 'refresh', 1_100, { 'oidc-provider-redis': 0.74, redis: 0.1 }),
  ]),
  measured('ours-postgres', 'refresh', [
    run('ours-postgres', 'refresh', 1_500, { 'auth-server-postgres': 0.52, postgres: 0.25 }),
  ]),
  measured('ours-postgres', 'introspect', [
    run('ours-postgres', 'introspect', 3_080, { 'auth-server-postgres': 0.28, postgres: 0.07 }),
  ]),
  measured('ours-postgres', 'orders-list', [
    run('ours-postgres', 'orders-list', 7_000, {
      'auth-server-postgres': 0.002,
      'orders-postgres': 0.19,
      postgres: 0.1,
    }),
  ]),
  measured('bare-pg', 'orders-list', [
    run('bare-pg', 'orders-list', 8_000, { 'bare-pg': 0.12, postgres: 0.1 }),
  ]),
];

describe('ratioOf', () => {
  it('divides, and has no answer without both sides or with a zero denominator', () => {
    expect(ratioOf(263, 429)).toBeCloseTo(0.613, 3);
    expect(ratioOf(3_278, 2_296)).toBeCloseTo(1.428, 3);
    expect(ratioOf(undefined, 429)).toBeUndefined();
    expect(ratioOf(263, undefined)).toBeUndefined();
    expect(ratioOf(263, 0)).toBeUndefined();
  });
});

describe('loadGeneratorBusy', () => {
  it('is the share of one core the harness spent: CPU per 2xx × 2xx per second', () => {
    expect(
      loadGeneratorBusy(run('ours-postgres', 'cc-jwt', 10_000, { 'load-generator': 0.095 })),
    ).toBeCloseTo(0.95, 6);
    expect(
      loadGeneratorBusy(run('ours-postgres', 'cc-jwt', 10_000, { 'auth-server-postgres': 0.2 })),
    ).toBeUndefined();
  });

  it('flags the runs where the load generator was the limit, and only those', () => {
    const busy = report([
      measured('ours-postgres', 'jwks', [run('ours-postgres', 'jwks', 20_000, { 'load-generator': 0.048 })]),
      measured('ours-postgres', 'cc-jwt', [
        run('ours-postgres', 'cc-jwt', 3_000, { 'load-generator': 0.09 }),
      ]),
    ]);
    const text = formatText(busy, summarize(busy), []);
    expect(text).toContain('ours-postgres jwks run 1: the load generator used 96 % of a core');
    expect(text).not.toContain('ours-postgres cc-jwt run 1: the load generator');
  });
});

describe('servingServer', () => {
  it('names the process that answers the workload', () => {
    expect(servingServer('ours-postgres', 'cc-jwt')).toBe('auth-server-postgres');
    expect(servingServer('ours-pglite', 'orders-create')).toBe('orders-pglite');
    expect(servingServer('oidc-provider', 'introspect')).toBe('oidc-provider');
    expect(servingServer('bare-fastify', 'http-ceiling')).toBe('bare-fastify');
  });
});

describe('cpuPerOk', () => {
  it('means the runs in µs, PostgreSQL apart', () => {
    const runs = outcomes.find((outcome) => outcome.target === 'ours-postgres')?.runs ?? [];
    expect(cpuPerOk(runs, 'auth-server-postgres')).toEqual({ serverUs: 260, postgresUs: 0 });
    expect(cpuPerOk(runs, 'no-such-server')).toBeUndefined();
  });
});

describe('summarize: CPU per request', () => {
  const rows = summarize(report(outcomes));
  const row = (name: string) => rows.find((candidate) => candidate.workload === name);

  it('reports our server, its PostgreSQL, the peer and the floor, and the ratios to the peer', () => {
    const ccJwt = row('cc-jwt')?.cpu;
    expect(ccJwt?.ours).toEqual({ serverUs: 260, postgresUs: 0 });
    expect(ccJwt?.peer).toEqual({ serverUs: 430 });
    // bare Fastify's 41 µs plus one node:crypto signature at 40,000/s (25 µs).
    expect(ccJwt?.ceiling).toMatchObject({ serverUs: 66 });
    expect(ccJwt?.vsPeer).toBeCloseTo(260 / 430, 6);
    expect(row('cc-jwt')?.vsPeer).toBeCloseTo(3_500 / 2_000, 6);

    const introspect = row('introspect')?.cpu;
    expect(introspect?.vsPeer).toBeCloseTo(1, 6);
    expect(introspect?.vsPeerWithPostgres).toBeCloseTo(350 / 280, 6);
    expect(introspect?.ceiling).toMatchObject({ serverUs: 41, label: 'bare-fastify' });
  });

  it('adds the Redis peer with its redis-server, and compares the sums of server and store', () => {
    const refresh = row('refresh')?.cpu;
    expect(refresh?.peerRedis).toEqual({ serverUs: 720, redisUs: 110 });
    expect(refresh?.ours).toEqual({ serverUs: 520, postgresUs: 250 });
    expect(refresh?.vsPeerRedis).toBeCloseTo(770 / 830, 6);
    expect(row('refresh')?.vsPeerRedis).toBeCloseTo(1_500 / 1_000, 6);
    const cells = cpuTableCells(summarize(report(outcomes))).find((cells) => cells[0] === 'refresh');
    expect(cells?.[1]).toBe('520 + 250 = 770 µs');
    expect(cells?.[4]).toBe('720 + 110 = 830 µs');
    expect(cells?.[7]).toBe('0.93×');
  });

  it('takes the measured bare token route as the cc-jwt floor when the run has it', () => {
    const withFloor = summarize(
      report([
        ...outcomes,
        measured('bare-fastify', 'token-floor', [
          run('bare-fastify', 'token-floor', 11_000, { 'bare-fastify': 0.09 }),
        ]),
      ]),
    );
    const ccJwt = withFloor.find((candidate) => candidate.workload === 'cc-jwt')?.cpu;
    expect(ccJwt?.ceiling).toEqual({ serverUs: 90, label: 'bare-fastify token route: form + 1 ES256 sign' });
    // Other workloads keep the bare GET route.
    const introspect = withFloor.find((candidate) => candidate.workload === 'introspect')?.cpu;
    expect(introspect?.ceiling).toMatchObject({ serverUs: 41, label: 'bare-fastify' });
  });

  it('reads the orders service, not the auth server, for the orders workloads, against bare pg', () => {
    const list = row('orders-list')?.cpu;
    expect(list?.ours).toEqual({ serverUs: 190, postgresUs: 100 });
    expect(list?.ceiling).toMatchObject({ serverUs: 120, postgresUs: 100, label: 'bare-pg' });
    expect(list?.vsPeer).toBeUndefined();
  });

  it('leaves workloads without CPU readings empty', () => {
    expect(row('code')?.cpu?.ours).toBeUndefined();
  });
});

describe('the tables', () => {
  const withPin = report(outcomes, { pinned: true, serverCpu: 0, loadCpu: 1 });
  const rows = summarize(withPin);
  const checks = checkTargets(withPin, rows);

  it('lead with the CPU table in the text output', () => {
    const lines = formatText(withPin, rows, checks).split('\n');
    const cpuHeader = lines.findIndex(
      (line) => line.startsWith('workload') && line.includes(CPU_HEADER[1] ?? ''),
    );
    const throughputHeader = lines.findIndex((line) => line.startsWith('workload') && line.includes('2xx/s'));
    expect(cpuHeader).toBeGreaterThanOrEqual(0);
    expect(cpuHeader).toBeLessThan(throughputHeader);
    const ccJwt = lines[cpuHeader + 2]?.split('│').map((cell) => cell.trim());
    expect(ccJwt).toEqual([
      'cc-jwt',
      '260 + 0.0 = 260 µs',
      '–',
      '430 µs',
      '–',
      '66 µs (bare-fastify + 1 ES256 sign (node:crypto))',
      '0.60× (servers alone 0.60×)',
      '–',
    ]);
  });

  it('lead with the CPU table in the markdown, one column per header', () => {
    const lines = formatMarkdown(withPin, rows, checks).split('\n');
    const cpuHeader = lines.indexOf(`| ${CPU_HEADER.join(' | ')} |`);
    expect(cpuHeader).toBeGreaterThan(0);
    expect(lines.findIndex((line) => line.includes('2xx/s ours ÷ oidc-provider memory'))).toBeGreaterThan(
      cpuHeader,
    );
    const introspect = lines.find((line) => line.startsWith('| introspect | 280 + 70 = 350 µs'));
    expect(introspect?.split(' | ')).toHaveLength(CPU_HEADER.length);
    expect(introspect).toContain('| 1.25× (servers alone 1.00×) |');
  });

  it('say where the processes ran', () => {
    expect(placementLine(withPin)).toContain('CPU 0');
    expect(placementLine(withPin)).toContain('CPU 1');
    const unpinned = report(outcomes, { pinned: false, reason: 'taskset not found (install util-linux)' });
    expect(placementLine(unpinned)).toContain('taskset not found');
    expect(placementLine(report(outcomes))).not.toContain('--pin');
  });
});
