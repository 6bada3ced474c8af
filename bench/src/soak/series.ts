/**
 * The pure parts of the soak run (`pnpm --filter bench run soak`): samples over time, the
 * percentile of a window, the slope of memory after the warm-up, and the CSV. Unit-tested in
 * test/soak.test.ts.
 */

/** One sample of both servers, taken every `--sample` seconds. */
export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  authRssMb: number;
  authHeapMb: number;
  ordersRssMb: number;
  ordersHeapMb: number;
  /** p99 of the window's single requests answered by each server, ms (0 when the window had none). */
  authP99Ms: number;
  ordersP99Ms: number;
  /** p99 of the window's whole sign-ins (/authorize, login form, redirect, code exchange), ms. */
  signInP99Ms: number;
  /** Requests finished in the window, and those with an unexpected answer or no answer. */
  requests: number;
  errors: number;
}

export const CSV_COLUMNS = [
  't_s',
  'auth_rss_mb',
  'auth_heap_mb',
  'orders_rss_mb',
  'orders_heap_mb',
  'auth_p99_ms',
  'orders_p99_ms',
  'sign_in_p99_ms',
  'requests',
  'errors',
] as const;

export function toCsv(samples: readonly SoakSample[]): string {
  const rows = samples.map((s) =>
    [
      s.t,
      s.authRssMb,
      s.authHeapMb,
      s.ordersRssMb,
      s.ordersHeapMb,
      s.authP99Ms,
      s.ordersP99Ms,
      s.signInP99Ms,
      s.requests,
      s.errors,
    ].join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...rows].join('\n')}\n`;
}

/** Nearest-rank percentile (p in 0..1) of values sorted ascending; 0 for no values. */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
}

/** p99 of unsorted latencies, rounded to 0.1 ms. */
export function p99(latencies: readonly number[]): number {
  return (
    Math.round(
      nearestRank(
        [...latencies].sort((a, b) => a - b),
        0.99,
      ) * 10,
    ) / 10
  );
}

/** Least-squares slope of y over x; 0 with fewer than two distinct x. */
export function leastSquaresSlope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const { x, y } of points) {
    covariance += (x - meanX) * (y - meanY);
    variance += (x - meanX) ** 2;
  }
  return variance === 0 ? 0 : covariance / variance;
}

export type MemorySeries = 'authRssMb' | 'authHeapMb' | 'ordersRssMb' | 'ordersHeapMb';
export const MEMORY_SERIES: readonly MemorySeries[] = [
  'authRssMb',
  'authHeapMb',
  'ordersRssMb',
  'ordersHeapMb',
];

export interface MemoryTrend {
  series: MemorySeries;
  /** MB per hour, from the samples after the warm-up. */
  slopeMbPerHour: number;
  /** The growth the slope makes over the post-warm-up window, MB. */
  growthMb: number;
  minMb: number;
  maxMb: number;
  meanMb: number;
  /** Growth over the window below 5 % of the mean and below 10 MB. */
  flat: boolean;
}

/**
 * The trend of each memory series after `warmupSeconds`. "Flat" is judged on the growth over the
 * measured window, not on the slope alone: a slope from a few minutes extrapolated to an hour
 * says little, what it made happen in the window is what was observed.
 */
export function memoryTrends(samples: readonly SoakSample[], warmupSeconds: number): MemoryTrend[] {
  const steady = samples.filter((sample) => sample.t >= warmupSeconds);
  const span = steady.length > 1 ? (steady.at(-1)?.t ?? 0) - (steady[0]?.t ?? 0) : 0;
  return MEMORY_SERIES.map((series) => {
    const values = steady.map((sample) => sample[series]);
    const slopePerSecond = leastSquaresSlope(steady.map((sample) => ({ x: sample.t, y: sample[series] })));
    const meanMb = values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
    const growthMb = slopePerSecond * span;
    return {
      series,
      slopeMbPerHour: round(slopePerSecond * 3600, 2),
      growthMb: round(growthMb, 1),
      minMb: values.length === 0 ? 0 : Math.min(...values),
      maxMb: values.length === 0 ? 0 : Math.max(...values),
      meanMb: round(meanMb, 1),
      flat: values.length > 1 && growthMb < Math.min(10, meanMb * 0.05),
    };
  });
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
