import { describe, expect, it } from 'vitest';
import type { BenchReport } from '../src/report.js';
import { formatRounds, median, summarizeRounds } from '../src/rounds.js';
import type { RunRecord, TargetLabel, WorkloadOutcome } from '../src/runner.js';

function outcome(target: TargetLabel, cpuMsPerOk: Record<string, number>): WorkloadOutcome {
  const run: RunRecord = {
    type: 'run',
    target,
    workload: 'refresh',
    run: 1,
    connections: 32,
    seconds: 5,
    responses: 5_000,
    okRps: 1_000,
    rps: 1_000,
    p50: 10,
    p99: 30,
    max: 40,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    mismatches: 0,
    statusCodes: { '200': 5_000 },
    cpuMsPerOk,
  };
  return { target, workload: 'refresh', status: 'measured', runs: [run] };
}

/** One round: ours (server, PostgreSQL), the in-memory peer, the Redis peer (server, redis-server). */
function round(ours: [number, number], memory: number, redis: [number, number]): BenchReport {
  return {
    startedAt: '2026-11-26T18:00:00Z',
    mode: 'full',
    settings: { connections: 32, seconds: 5, warmupSeconds: 2, runs: 1, dbs: ['postgres'] },
    machine: {
      cpu: 'x',
      cores: 2,
      memoryGb: 4,
      os: 'Linux',
      node: '24',
      postgres: '15',
      loadAverageAtStart: [0, 0, 0],
    },
    outcomes: [
      outcome('ours-postgres', { 'auth-server-postgres': ours[0], postgres: ours[1] }),
      outcome('oidc-provider', { 'oidc-provider': memory }),
      outcome('oidc-provider-redis', { 'oidc-provider-redis': redis[0], redis: redis[1] }),
    ],
    signing: [],
    rss: [],
    startFailures: [],
  };
}

describe('median', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });
});

describe('summarizeRounds', () => {
  const rounds = [
    round([0.5, 0.25], 0.5, [0.7, 0.1]),
    round([0.6, 0.3], 0.55, [0.9, 0.15]),
    // A disturbed round: everything slower; the medians ignore it.
    round([1.2, 0.6], 1.0, [1.6, 0.3]),
  ];
  const [refresh] = summarizeRounds(rounds);

  it('gives the median server, store and sum of every system, µs per 2xx', () => {
    expect(refresh?.workload).toBe('refresh');
    expect(refresh?.rounds).toBe(3);
    expect(refresh?.ours).toMatchObject({ serverUs: 600, storeUs: 300, sumUs: 900, sums: [750, 900, 1_800] });
    expect(refresh?.memory).toMatchObject({ serverUs: 550, storeUs: 0, sumUs: 550 });
    expect(refresh?.redis).toMatchObject({ serverUs: 900, storeUs: 150, sumUs: 1_050 });
  });

  it("takes each round's ratio of the sums, then their median", () => {
    // Rounds 0.94, 0.86, 0.95: the median is the first round's, not the ratio of the medians (0.86).
    expect(refresh?.vsRedis).toBeCloseTo(750 / 800, 6);
    // Rounds 1.50, 1.64, 1.80.
    expect(refresh?.vsMemory).toBeCloseTo(900 / 550, 6);
  });

  it('prints one markdown row per workload, each round in brackets', () => {
    const table = formatRounds(summarizeRounds(rounds)).split('\n');
    expect(table[2]).toBe(
      '| refresh | 600 + 300 = 900 µs (750, 900, 1,800) | 550 µs (500, 550, 1,000) | 900 + 150 = 1,050 µs (800, 1,050, 1,900) | 1.64× | 0.94× |',
    );
  });
});
