import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseClockTicks, parseCpuList, parseProcStatCpuTicks, readCpuMs } from '../src/proc.js';

/** A /proc/<pid>/stat line as proc(5) lays it out: pid (comm) state ppid … utime stime … */
function statLine(comm: string, utime: number, stime: number): string {
  const afterComm = ['S', '1', '100', '100', '0', '-1', '4194560', '2000', '0', '0', '0'];
  const rest = ['5', '7', '20', '0', '11', '0', '123456', '987654321', '2000'];
  return `4242 (${comm}) ${[...afterComm, String(utime), String(stime), ...rest].join(' ')}\n`;
}

describe('parseProcStatCpuTicks', () => {
  it('adds utime and stime (fields 14 and 15)', () => {
    expect(parseProcStatCpuTicks(statLine('node', 1234, 56))).toBe(1290);
  });

  it('counts fields from the last parenthesis when the name holds spaces and parentheses', () => {
    expect(parseProcStatCpuTicks(statLine('my (odd) name 1 2 3', 300, 45))).toBe(345);
    expect(parseProcStatCpuTicks(statLine(') S 9 9 9', 10, 5))).toBe(15);
  });

  it('answers undefined for text that is not a stat line', () => {
    expect(parseProcStatCpuTicks('')).toBeUndefined();
    expect(parseProcStatCpuTicks('4242 (node) S 1 2')).toBeUndefined();
    expect(parseProcStatCpuTicks(statLine('node', 1, 2).replace(' 1 2 5 7', ' x 2 5 7'))).toBeUndefined();
  });

  // /proc is Linux's (CI and the bench machine); the parsers above run everywhere.
  it.runIf(existsSync('/proc/self/stat'))(
    'reads this process from /proc in step with process.cpuUsage',
    async () => {
      // Spend 200 ms of CPU (not of wall time: the machine may be busy) and compare the two
      // readers' deltas. A wrong tick rate (a factor of 10) or wrong fields would be far off; the
      // tolerance covers /proc's whole-tick accounting (10 ms at USER_HZ 100) summed over threads.
      const ownMs = () => {
        const used = process.cpuUsage();
        return (used.user + used.system) / 1000;
      };
      const procBefore = await readCpuMs(process.pid);
      const ownBefore = ownMs();
      const giveUp = Date.now() + 10_000;
      while (ownMs() - ownBefore < 200 && Date.now() < giveUp) Math.sqrt(Math.random());
      const procAfter = await readCpuMs(process.pid);
      const ownDelta = ownMs() - ownBefore;
      expect(ownDelta).toBeGreaterThanOrEqual(200);
      const procDelta = (procAfter ?? 0) - (procBefore ?? 0);
      expect(procDelta / ownDelta).toBeGreaterThan(0.6);
      expect(procDelta / ownDelta).toBeLessThan(1.5);
    },
  );
});

describe('parseClockTicks', () => {
  it('takes the positive integer getconf prints', () => {
    expect(parseClockTicks('100\n')).toBe(100);
    expect(parseClockTicks('250')).toBe(250);
  });

  it('refuses anything else', () => {
    expect(parseClockTicks('')).toBeUndefined();
    expect(parseClockTicks('undefined\n')).toBeUndefined();
    expect(parseClockTicks('0')).toBeUndefined();
    expect(parseClockTicks('-100')).toBeUndefined();
  });
});

describe('parseCpuList', () => {
  it('expands ranges and single CPUs in order', () => {
    expect(parseCpuList('0-1')).toEqual([0, 1]);
    expect(parseCpuList('6-7,0,3\n')).toEqual([0, 3, 6, 7]);
    expect(parseCpuList('2')).toEqual([2]);
  });

  it('gives no CPU for a malformed list', () => {
    expect(parseCpuList('')).toEqual([]);
    expect(parseCpuList('3-1')).toEqual([]);
    expect(parseCpuList('0-1,x')).toEqual([]);
  });
});
