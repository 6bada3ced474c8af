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
  /**
   * V8 heap still in use right after a forced full collection (`soak/inspector.ts`), MB; null in
   * the samples between two collections (`--gc-every`).
   */
  authHeapAfterGcMb: number | null;
  ordersHeapAfterGcMb: number | null;
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
  'auth_heap_after_gc_mb',
  'orders_heap_after_gc_mb',
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
      s.authHeapAfterGcMb ?? '',
      s.ordersHeapAfterGcMb ?? '',
      s.authP99Ms,
      s.ordersP99Ms,
      s.signInP99Ms,
      s.requests,
      s.errors,
    ].join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...rows].join('\n')}\n`;
}

/** The samples of a CSV written by `toCsv` (for judging a past run again). */
export function fromCsv(text: string): SoakSample[] {
  const [header, ...lines] = text.trim().split('\n');
  if (header !== CSV_COLUMNS.join(','))
    throw new Error(`not a soak CSV: the header is not ${CSV_COLUMNS.join(',')}`);
  return lines.map((line) => {
    const cell = line.split(',');
    const number = (index: number) => Number(cell[index]);
    const optional = (index: number) => (cell[index] === '' ? null : Number(cell[index]));
    return {
      t: number(0),
      authRssMb: number(1),
      authHeapMb: number(2),
      ordersRssMb: number(3),
      ordersHeapMb: number(4),
      authHeapAfterGcMb: optional(5),
      ordersHeapAfterGcMb: optional(6),
      authP99Ms: number(7),
      ordersP99Ms: number(8),
      signInP99Ms: number(9),
      requests: number(10),
      errors: number(11),
    };
  });
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

export type MemorySeries =
  | 'authRssMb'
  | 'authHeapMb'
  | 'authHeapAfterGcMb'
  | 'ordersRssMb'
  | 'ordersHeapMb'
  | 'ordersHeapAfterGcMb';
export const MEMORY_SERIES: readonly MemorySeries[] = [
  'authRssMb',
  'authHeapMb',
  'authHeapAfterGcMb',
  'ordersRssMb',
  'ordersHeapMb',
  'ordersHeapAfterGcMb',
];

/**
 * The bound on each memory series' slope after the warm-up under which it counts as flat, MB per
 * hour; null: not judged.
 *
 * - The heap after a full collection is what a leak moves; our servers keep 25–35 MB there, and
 *   2 MB/h would double it within a day of uptime. The samples of one soak measure that level to
 *   about ±0.3 MB, which over the 25 minutes after the warm-up puts the slope's own error near
 *   0.5 MB/h, well under the bound.
 * - RSS also holds pages the allocator has not returned to the kernel yet, and moves by several MB
 *   with the load; 12 MB/h is 5 MB over the 25 minutes, 5 % of a server's 100 MB.
 * - "Heap used" at a random moment includes the garbage not yet collected: it follows the
 *   collector's sawtooth (full collections many minutes apart), and a line through a few teeth
 *   tilts with where they fall, so it is shown but not judged.
 */
export const FLAT_BOUND_MB_PER_HOUR: Readonly<Record<TrendSeries, number | null>> = {
  authRssFloorMb: 12,
  ordersRssFloorMb: 12,
  authHeapAfterGcMb: 2,
  ordersHeapAfterGcMb: 2,
  authRssMb: null,
  ordersRssMb: null,
  authHeapMb: null,
  ordersHeapMb: null,
};

/**
 * RSS judged on its floor: the lowest sample between two forced collections. A single sample can
 * catch a transient allocation outside the heap (a sign-in's scrypt holds 32 MiB for its
 * duration: 128 · N · r with N = 2^15, r = 8), which a line through every sample would read as a
 * trend; a leak raises every sample, the lowest included.
 */
export type RssFloorSeries = 'authRssFloorMb' | 'ordersRssFloorMb';
export type TrendSeries = MemorySeries | RssFloorSeries;
export const TREND_SERIES: readonly TrendSeries[] = [...MEMORY_SERIES, 'authRssFloorMb', 'ordersRssFloorMb'];

const FLOOR_OF: Readonly<Record<RssFloorSeries, { rss: MemorySeries; collected: MemorySeries }>> = {
  authRssFloorMb: { rss: 'authRssMb', collected: 'authHeapAfterGcMb' },
  ordersRssFloorMb: { rss: 'ordersRssMb', collected: 'ordersHeapAfterGcMb' },
};

/** One point per collection sample: the least RSS since the previous collection sample. */
export function rssFloorPoints(
  samples: readonly SoakSample[],
  series: RssFloorSeries,
): { x: number; y: number }[] {
  const { rss, collected } = FLOOR_OF[series];
  const points: { x: number; y: number }[] = [];
  let floor = Number.POSITIVE_INFINITY;
  for (const sample of samples) {
    floor = Math.min(floor, sample[rss] ?? Number.POSITIVE_INFINITY);
    if (sample[collected] === null) continue;
    points.push({ x: sample.t, y: floor });
    floor = Number.POSITIVE_INFINITY;
  }
  return points;
}

export interface MemoryTrend {
  series: TrendSeries;
  /** MB per hour, from the samples after the warm-up. */
  slopeMbPerHour: number;
  /** The growth the slope makes over the post-warm-up window, MB. */
  growthMb: number;
  minMb: number;
  maxMb: number;
  meanMb: number;
  /** Samples after the warm-up that had this series. */
  points: number;
  /** `FLAT_BOUND_MB_PER_HOUR` of the series. */
  boundMbPerHour: number | null;
  /** Slope below the bound (null when the series is not judged). */
  flat: boolean | null;
}

/**
 * The trend of each memory series after `warmupSeconds`: the least-squares slope through the
 * samples that have the series, judged against `FLAT_BOUND_MB_PER_HOUR`. At least three samples
 * are needed for a verdict.
 */
export function memoryTrends(samples: readonly SoakSample[], warmupSeconds: number): MemoryTrend[] {
  const steady = samples.filter((sample) => sample.t >= warmupSeconds);
  return TREND_SERIES.map((series) => trendOf(series, pointsOf(series, steady)));
}

function pointsOf(series: TrendSeries, steady: readonly SoakSample[]): { x: number; y: number }[] {
  if (series === 'authRssFloorMb' || series === 'ordersRssFloorMb') return rssFloorPoints(steady, series);
  return steady.flatMap((sample) => {
    const y = sample[series];
    return y === null ? [] : [{ x: sample.t, y }];
  });
}

function trendOf(series: TrendSeries, points: readonly { x: number; y: number }[]): MemoryTrend {
  const values = points.map((point) => point.y);
  const span = points.length > 1 ? (points.at(-1)?.x ?? 0) - (points[0]?.x ?? 0) : 0;
  const slopePerSecond = leastSquaresSlope(points);
  const meanMb = values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
  const slopeMbPerHour = slopePerSecond * 3600;
  const bound = FLAT_BOUND_MB_PER_HOUR[series];
  return {
    series,
    slopeMbPerHour: round(slopeMbPerHour, 2),
    growthMb: round(slopePerSecond * span, 1),
    minMb: values.length === 0 ? 0 : Math.min(...values),
    maxMb: values.length === 0 ? 0 : Math.max(...values),
    meanMb: round(meanMb, 1),
    points: points.length,
    boundMbPerHour: bound,
    flat: bound === null ? null : points.length >= 3 && slopeMbPerHour < bound,
  };
}

/** One line per trend and the overall verdict, as the soak prints them. */
export function describeTrends(trends: readonly MemoryTrend[]): string[] {
  const verdict = (trend: MemoryTrend) =>
    trend.flat === null
      ? 'not judged'
      : `${trend.flat ? 'flat' : 'NOT flat'} (bound ${trend.boundMbPerHour} MB/h)`;
  return [
    ...trends.map(
      (trend) =>
        `${trend.series}: ${trend.slopeMbPerHour} MB/h after the warm-up (${trend.growthMb} MB over the window, ${trend.points} points; min ${trend.minMb}, max ${trend.maxMb}, mean ${trend.meanMb} MB) ${verdict(trend)}`,
    ),
    `memory after the warm-up: ${memoryFlat(trends) ? 'FLAT' : 'NOT FLAT'} (heap after a full collection under ${FLAT_BOUND_MB_PER_HOUR.authHeapAfterGcMb} MB/h, RSS floor under ${FLAT_BOUND_MB_PER_HOUR.authRssFloorMb} MB/h)`,
  ];
}

/** Memory is flat after the warm-up when every judged series is. */
export function memoryFlat(trends: readonly MemoryTrend[]): boolean {
  return trends.every((trend) => trend.flat !== false);
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
