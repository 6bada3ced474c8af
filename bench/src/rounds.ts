/**
 * Medians over rounds: several `pnpm bench` result files of the same workloads, run one after the
 * other so the machine's drift hits every system alike, summarised per workload as the median CPU
 * per 2xx (server + store) of ours and of both oidc-provider peers, and the median of each round's
 * ratio of the sums. On a shared machine one run's absolute numbers move by tens of per cent; the
 * median of interleaved rounds, and a ratio taken within each round, move far less.
 *
 *   pnpm --filter bench run rounds results/<stamp1>-full.json results/<stamp2>-full.json …
 */
import { type BenchReport, type CpuPerOk, formatMicros, summarize, totalUs } from './report.js';
import type { WorkloadName } from './workloads/types.js';

export interface RoundsRow {
  workload: WorkloadName;
  rounds: number;
  /** Medians over the rounds, µs per 2xx; undefined where no round measured the system. */
  ours?: MedianCpu;
  memory?: MedianCpu;
  redis?: MedianCpu;
  /** Median of each round's sum ratio: ours ÷ the peer. */
  vsMemory?: number;
  vsRedis?: number;
}

export interface MedianCpu {
  serverUs: number;
  storeUs: number;
  sumUs: number;
  /** Every round's sum, in round order. */
  sums: number[];
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function medianCpu(readings: (CpuPerOk | undefined)[]): MedianCpu | undefined {
  const present = readings.filter((cpu): cpu is CpuPerOk => cpu !== undefined);
  if (present.length === 0) return undefined;
  const sums = present.map(totalUs);
  return {
    serverUs: median(present.map((cpu) => cpu.serverUs)) ?? 0,
    storeUs: median(present.map((cpu) => (cpu.postgresUs ?? 0) + (cpu.redisUs ?? 0))) ?? 0,
    sumUs: median(sums) ?? 0,
    sums,
  };
}

function medianRatio(pairs: [CpuPerOk | undefined, CpuPerOk | undefined][]): number | undefined {
  const ratios = pairs.flatMap(([ours, peer]) =>
    ours && peer && totalUs(peer) > 0 ? [totalUs(ours) / totalUs(peer)] : [],
  );
  return median(ratios);
}

/** One row per workload measured in any round. */
export function summarizeRounds(reports: readonly BenchReport[]): RoundsRow[] {
  const perRound = reports.map((report) => summarize(report));
  const workloads = [
    ...new Set(perRound.flatMap((rows) => rows.filter((row) => row.cpu).map((row) => row.workload))),
  ];
  return workloads.flatMap((workload) => {
    const cpus = perRound.map((rows) => rows.find((row) => row.workload === workload)?.cpu);
    const ours = medianCpu(cpus.map((cpu) => cpu?.ours));
    const memory = medianCpu(cpus.map((cpu) => cpu?.peer));
    const redis = medianCpu(cpus.map((cpu) => cpu?.peerRedis));
    if (!ours && !memory && !redis) return [];
    const row: RoundsRow = { workload, rounds: reports.length };
    if (ours) row.ours = ours;
    if (memory) row.memory = memory;
    if (redis) row.redis = redis;
    const vsMemory = medianRatio(cpus.map((cpu) => [cpu?.ours, cpu?.peer]));
    const vsRedis = medianRatio(cpus.map((cpu) => [cpu?.ours, cpu?.peerRedis]));
    if (vsMemory !== undefined) row.vsMemory = vsMemory;
    if (vsRedis !== undefined) row.vsRedis = vsRedis;
    return [row];
  });
}

function cpuCell(cpu: MedianCpu | undefined, withStore: boolean): string {
  if (!cpu) return '–';
  const all = cpu.sums.map((sum) => formatMicros(sum)).join(', ');
  const parts = withStore
    ? `${formatMicros(cpu.serverUs)} + ${formatMicros(cpu.storeUs)} = ${formatMicros(cpu.sumUs)} µs`
    : `${formatMicros(cpu.sumUs)} µs`;
  return `${parts} (${all})`;
}

const ratioCell = (value: number | undefined) => (value === undefined ? '–' : `${value.toFixed(2)}×`);

export const ROUNDS_HEADER = [
  'workload',
  'ours: server + PostgreSQL = sum',
  'oidc-provider, memory',
  'oidc-provider, Redis: server + redis-server = sum',
  'sums, ours ÷ memory',
  'sums, ours ÷ Redis',
];

export function formatRounds(rows: readonly RoundsRow[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(ROUNDS_HEADER),
    line(ROUNDS_HEADER.map(() => '---')),
    ...rows.map((row) =>
      line([
        row.workload,
        cpuCell(row.ours, true),
        cpuCell(row.memory, false),
        cpuCell(row.redis, true),
        ratioCell(row.vsMemory),
        ratioCell(row.vsRedis),
      ]),
    ),
  ].join('\n');
}
