/**
 * `--pin`: the servers under test on one core, the load generator (this process, which runs
 * autocannon) on another, with `taskset` (util-linux). On two shared cores the load generator
 * otherwise takes CPU from the server it measures, and the faster server leaves less of the
 * machine to itself. PostgreSQL's backends are not ours to move: they stay where the OS puts them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readAllowedCpus } from './proc.js';

export type PinPlan =
  | { pinned: true; serverCpu: number; loadCpu: number }
  | { pinned: false; reason: string };

/**
 * Which core gets what: the first two CPUs this process may use — servers on the first, load on
 * the second. Without taskset or with fewer than two CPUs the run goes on unpinned, saying why.
 */
export function planPinning(tasksetFound: boolean, allowedCpus: readonly number[] | undefined): PinPlan {
  if (!tasksetFound) {
    return { pinned: false, reason: 'taskset not found (install util-linux): running unpinned' };
  }
  if (allowedCpus === undefined) {
    return { pinned: false, reason: 'no /proc/self/status Cpus_allowed_list: running unpinned' };
  }
  const [serverCpu, loadCpu] = allowedCpus;
  if (serverCpu === undefined || loadCpu === undefined) {
    return {
      pinned: false,
      reason: `only ${allowedCpus.length} CPU available to the harness: running unpinned`,
    };
  }
  return { pinned: true, serverCpu, loadCpu };
}

const run = promisify(execFile);

async function tasksetFound(): Promise<boolean> {
  try {
    await run('taskset', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/**
 * Plans the pinning and moves every thread of this process (`-a`; threads started later inherit
 * it) to the load generator's core. Servers are pinned as they start (`ServerSpec.cpu`).
 */
export async function pinHarness(): Promise<PinPlan> {
  const plan = planPinning(await tasksetFound(), await readAllowedCpus('self'));
  if (!plan.pinned) return plan;
  try {
    await run('taskset', ['-a', '-p', '-c', String(plan.loadCpu), String(process.pid)]);
    return plan;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { pinned: false, reason: `taskset failed (${message}): running unpinned` };
  }
}
