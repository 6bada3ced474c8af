/**
 * Reading Linux's /proc: the pure parsers (unit-tested in test/proc.test.ts) and the few readers
 * the harness samples with. CPU time per request is the headline of the bench: it barely moves
 * when other work competes for the cores, where throughput swings ±25 % on a shared machine.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/**
 * utime + stime of a process, in clock ticks, from the text of `/proc/<pid>/stat`; undefined when
 * the text is not one. proc(5): field 2 is the command name in parentheses and may itself contain
 * spaces and parentheses (`(my (odd) name)`), so the fields are counted from the LAST `)`; after it
 * come field 3 (state) … field 14 (utime) and field 15 (stime), summed over every thread.
 */
export function parseProcStatCpuTicks(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isInteger(utime) && Number.isInteger(stime) ? utime + stime : undefined;
}

/** The output of `getconf CLK_TCK`; undefined unless it is a positive integer. */
export function parseClockTicks(output: string): number | undefined {
  const value = Number(output.trim());
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * Linux's USER_HZ, the unit of /proc's CPU times, from `getconf CLK_TCK`. The kernel ABI fixes it at
 * 100 on every mainstream architecture, which is the fallback where getconf is missing.
 */
let clockTicks: number | undefined;
export function clockTicksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = parseClockTicks(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) ?? 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * CPU time (user + system, every thread) of a pid so far, in ms; undefined where /proc is missing
 * or the process is gone.
 */
export async function readCpuMs(pid: number): Promise<number | undefined> {
  try {
    const ticks = parseProcStatCpuTicks(await readFile(`/proc/${pid}/stat`, 'utf8'));
    return ticks === undefined ? undefined : (ticks * 1000) / clockTicksPerSecond();
  } catch {
    return undefined;
  }
}

/** VmRSS of a pid from /proc, in bytes; undefined where /proc is missing or the process is gone. */
export async function readRssBytes(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CPUs a process may run on, from `/proc/<pid>/status`'s `Cpus_allowed_list` (`0-1,4,6-7`);
 * undefined where /proc is missing.
 */
export async function readAllowedCpus(pid: number | 'self'): Promise<number[] | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
    return match?.[1] === undefined ? undefined : parseCpuList(match[1]);
  } catch {
    return undefined;
  }
}

/** A kernel CPU list (`0-1,4,6-7`, cpuset(7) "List format") as sorted CPU numbers; [] when malformed. */
export function parseCpuList(list: string): number[] {
  const cpus = new Set<number>();
  for (const part of list.trim().split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) return [];
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (last < first) return [];
    for (let cpu = first; cpu <= last; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}
