import { describe, expect, it } from 'vitest';
import {
  CSV_COLUMNS,
  FLAT_BOUND_MB_PER_HOUR,
  fromCsv,
  leastSquaresSlope,
  memoryFlat,
  memoryTrends,
  nearestRank,
  p99,
  rssFloorPoints,
  type SoakSample,
  toCsv,
} from '../src/soak/series.js';
import { lineChartsSvg, niceCeiling } from '../src/soak/svg.js';

function sample(t: number, authRssMb: number, over: Partial<SoakSample> = {}): SoakSample {
  return {
    t,
    authRssMb,
    authHeapMb: 30,
    ordersRssMb: 90,
    ordersHeapMb: 25,
    authHeapAfterGcMb: null,
    ordersHeapAfterGcMb: null,
    authP99Ms: 12.5,
    ordersP99Ms: 8,
    signInP99Ms: 150,
    requests: 200,
    errors: 0,
    ...over,
  };
}

describe('soak series', () => {
  it('nearest-rank percentiles: p99 of 1..100 is 99, of one value that value, of none 0', () => {
    const values = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(nearestRank(values, 0.99)).toBe(99);
    expect(nearestRank(values, 0.5)).toBe(50);
    expect(p99([...values].reverse())).toBe(99);
    expect(p99([7.25])).toBe(7.3);
    expect(p99([])).toBe(0);
  });

  it('least-squares slope of a line is its slope, of a constant 0', () => {
    expect(leastSquaresSlope([0, 10, 20, 30].map((x) => ({ x, y: 5 + 0.5 * x })))).toBeCloseTo(0.5, 10);
    expect(leastSquaresSlope([0, 10, 20].map((x) => ({ x, y: 42 })))).toBe(0);
    expect(leastSquaresSlope([{ x: 1, y: 2 }])).toBe(0);
  });

  /** A collection every 6th sample (once a minute at 10 s), as the soak does by default. */
  const collectedEvery6 = (index: number) =>
    (index + 1) % 6 === 0 ? { authHeapAfterGcMb: 30, ordersHeapAfterGcMb: 25 } : {};
  const trendOf = (trends: ReturnType<typeof memoryTrends>, series: string) =>
    trends.find((trend) => trend.series === series);

  it('judges memory after the warm-up only: a warm-up climb then a plateau is flat, a steady climb is not', () => {
    // RSS climbs 40 MB in the first 300 s, then stays at 140 MB with ±0.5 MB of noise.
    const plateau = Array.from({ length: 180 }, (_, index) => {
      const t = (index + 1) * 10;
      return sample(
        t,
        t < 300 ? 100 + (t / 300) * 40 : 140 + (index % 2 === 0 ? 0.5 : -0.5),
        collectedEvery6(index),
      );
    });
    const trends = memoryTrends(plateau, 300);
    const raw = trendOf(trends, 'authRssMb');
    expect(raw?.flat).toBeNull();
    expect(Math.abs(raw?.slopeMbPerHour ?? 99)).toBeLessThan(1);
    expect(raw?.minMb).toBe(139.5);
    expect(raw?.maxMb).toBe(140.5);
    const floor = trendOf(trends, 'authRssFloorMb');
    expect(floor?.points).toBe(26);
    expect(floor?.flat).toBe(true);
    expect(memoryFlat(trends)).toBe(true);

    // 1 MB a minute: 25 MB over the 25 minutes after the warm-up, 60 MB/h, in every sample.
    const leak = Array.from({ length: 180 }, (_, index) =>
      sample((index + 1) * 10, 100 + (index + 1) / 6, collectedEvery6(index)),
    );
    const leaking = memoryTrends(leak, 300);
    expect(trendOf(leaking, 'authRssMb')?.slopeMbPerHour).toBeCloseTo(60, 5);
    expect(trendOf(leaking, 'authRssMb')?.growthMb).toBeCloseTo(25, 1);
    expect(trendOf(leaking, 'authRssFloorMb')?.slopeMbPerHour).toBeCloseTo(60, 0);
    expect(trendOf(leaking, 'authRssFloorMb')?.flat).toBe(false);
    expect(memoryFlat(leaking)).toBe(false);
  });

  it("judges RSS on its floor between collections: transient spikes (a sign-in's 32 MiB scrypt) do not make a trend", () => {
    // RSS at 95 ± 3 MB; from 15 minutes on, a third of the samples catch a scrypt in flight (+32 MB).
    const spiky = Array.from({ length: 180 }, (_, index) => {
      const t = (index + 1) * 10;
      const spike = t > 900 && index % 3 === 2 ? 32 : 0;
      return sample(t, 95 + (index % 2 === 0 ? 3 : -3) + spike, collectedEvery6(index));
    });
    const trends = memoryTrends(spiky, 300);
    expect(trendOf(trends, 'authRssMb')?.slopeMbPerHour).toBeGreaterThan(
      FLAT_BOUND_MB_PER_HOUR.authRssFloorMb ?? 0,
    );
    expect(trendOf(trends, 'authRssMb')?.flat).toBeNull();
    expect(rssFloorPoints(spiky.slice(0, 12), 'authRssFloorMb')).toEqual([
      { x: 60, y: 92 },
      { x: 120, y: 92 },
    ]);
    expect(trendOf(trends, 'authRssFloorMb')?.slopeMbPerHour).toBe(0);
    expect(trendOf(trends, 'authRssFloorMb')?.flat).toBe(true);
    expect(memoryFlat(trends)).toBe(true);
  });

  it('judges the heap after a full collection, not the sawtooth of heap used: teeth over a steady floor are flat', () => {
    // 30 minutes, a sample every 10 s. Heap used climbs 6 MB over 15 minutes and falls back at each
    // natural full collection (a tooth ending mid-window tilts a line through it upwards); every
    // 6th sample also has the heap after a forced full collection: 27.5 MB ± 0.2.
    const sawtooth = Array.from({ length: 180 }, (_, index) => {
      const t = (index + 1) * 10;
      const collected = (index + 1) % 6 === 0;
      return sample(t, 100 + (index % 2) * 0.4, {
        ordersHeapMb: 27.5 + ((t % 900) / 900) * 6 + (t > 1500 ? 3 : 0),
        ordersHeapAfterGcMb: collected ? 27.5 + (index % 4 === 1 ? 0.2 : -0.2) : null,
        authHeapAfterGcMb: collected ? 30 : null,
      });
    });
    const trends = memoryTrends(sawtooth, 300);
    const bySeries = new Map(trends.map((trend) => [trend.series, trend]));
    expect(bySeries.get('ordersHeapMb')?.flat).toBeNull();
    expect(bySeries.get('ordersHeapMb')?.slopeMbPerHour).toBeGreaterThan(
      FLAT_BOUND_MB_PER_HOUR.ordersHeapAfterGcMb ?? 0,
    );
    const afterGc = bySeries.get('ordersHeapAfterGcMb');
    expect(afterGc?.points).toBe(26); // one a minute: at 300, 360, … 1800 s
    expect(afterGc?.boundMbPerHour).toBe(2);
    expect(Math.abs(afterGc?.slopeMbPerHour ?? 99)).toBeLessThan(0.5);
    expect(afterGc?.flat).toBe(true);
    expect(bySeries.get('authRssFloorMb')?.flat).toBe(true);
    expect(memoryFlat(trends)).toBe(true);
  });

  it('a heap that keeps 3 MB/h more after each full collection is a leak; 1.5 MB/h is within the bound', () => {
    const withFloor = (mbPerHour: number) =>
      Array.from({ length: 30 }, (_, index) => {
        const t = (index + 1) * 60;
        return sample(t, 100, { ordersHeapAfterGcMb: 27 + (mbPerHour * t) / 3600, authHeapAfterGcMb: 30 });
      });
    const leaking = memoryTrends(withFloor(3), 300);
    expect(leaking.find((trend) => trend.series === 'ordersHeapAfterGcMb')?.slopeMbPerHour).toBeCloseTo(3, 5);
    expect(leaking.find((trend) => trend.series === 'ordersHeapAfterGcMb')?.flat).toBe(false);
    expect(memoryFlat(leaking)).toBe(false);
    const slow = memoryTrends(withFloor(1.5), 300);
    expect(slow.find((trend) => trend.series === 'ordersHeapAfterGcMb')?.flat).toBe(true);
    expect(memoryFlat(slow)).toBe(true);
  });

  it('gives no flat verdict on fewer than three samples after the warm-up', () => {
    const short = [sample(310, 100, { authHeapAfterGcMb: 30 }), sample(320, 100, { authHeapAfterGcMb: 30 })];
    const trends = memoryTrends(short, 300);
    expect(trends.find((trend) => trend.series === 'authHeapAfterGcMb')?.flat).toBe(false);
    expect(trends.find((trend) => trend.series === 'ordersHeapAfterGcMb')?.points).toBe(0);
    expect(memoryFlat(trends)).toBe(false);
  });

  it('writes one CSV row per sample under a header naming the columns', () => {
    const csv = toCsv([sample(10, 120.5), sample(20, 121, { errors: 2 })]);
    const [header, first, second, end] = csv.split('\n');
    expect(header).toBe(CSV_COLUMNS.join(','));
    expect(first).toBe('10,120.5,30,90,25,,,12.5,8,150,200,0');
    expect(second?.split(',').at(-1)).toBe('2');
    const collected = toCsv([sample(60, 120, { authHeapAfterGcMb: 27.4, ordersHeapAfterGcMb: 24.6 })]);
    expect(collected.split('\n')[1]).toBe('60,120,30,90,25,27.4,24.6,12.5,8,150,200,0');
    const samples = [
      sample(10, 120.5),
      sample(60, 120, { authHeapAfterGcMb: 27.4, ordersHeapAfterGcMb: 24.6 }),
    ];
    expect(fromCsv(toCsv(samples))).toEqual(samples);
    expect(() => fromCsv('t,rss\n1,2\n')).toThrow(/not a soak CSV/);
    expect(end).toBe('');
  });
});

describe('soak plot (SVG)', () => {
  it('rounds axes up to 1, 2 or 5 × 10^n', () => {
    expect(niceCeiling(137)).toBe(200);
    expect(niceCeiling(12)).toBe(20);
    expect(niceCeiling(0.3)).toBe(0.5);
    expect(niceCeiling(0)).toBe(1);
  });

  it('draws one polyline per series, scaled into its panel, with a legend and escaped text', () => {
    const svg = lineChartsSvg(
      [
        {
          title: 'Memory',
          yLabel: 'MB',
          series: [
            {
              name: 'auth <rss>',
              color: '#123456',
              points: [
                { x: 0, y: 0 },
                { x: 30, y: 100 },
              ],
            },
          ],
        },
        {
          title: 'p99',
          yLabel: 'ms',
          series: [{ name: 'orders', color: '#654321', points: [{ x: 15, y: 5 }] }],
        },
      ],
      'minutes',
      'caption & notes',
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('<title>Memory; p99. caption &#38; notes</title>');
    const polylines = [...svg.matchAll(/<polyline [^>]*stroke="(#\w+)"[^>]*points="([^"]*)"/g)];
    expect(polylines.map((match) => match[1])).toEqual(['#123456', '#654321']);
    // Panel 1: x 0 → left edge (70), x 30 → right edge (900 − 170); y 0 → bottom (34 + 186), y 100 → top (34).
    expect(polylines[0]?.[2]).toBe('70.0,220.0 730.0,34.0');
    // Panel 2 starts 260 px lower; y axis up to 5.
    expect(polylines[1]?.[2]).toBe('400.0,294.0');
    expect(svg).toContain('auth &#60;rss&#62;');
    expect(svg).toContain('caption &#38; notes');
    expect(svg).not.toContain('<rss>');
  });
});
