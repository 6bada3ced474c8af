/**
 * Runs one workload against one target: a preflight request by hand, a warm-up, then the measured
 * runs, each an autocannon instance in this process against a server in another process.
 */
import autocannon from 'autocannon';
import { type PacedResult, runPaced } from './paced.js';
import type { BenchName, RunPlan, Workload } from './workloads/types.js';

export type TargetLabel =
  | 'ours-postgres'
  | 'ours-pglite'
  | 'oidc-provider'
  | 'oidc-provider-redis'
  | 'bare-fastify'
  | 'bare-pg';

export interface RunRecord {
  type: 'run';
  target: TargetLabel;
  workload: BenchName;
  run: number;
  connections: number;
  /** Wall-clock length of the run, seconds. */
  seconds: number;
  /** Responses of any status. */
  responses: number;
  /** 2xx responses per second: the throughput every table and target uses. */
  okRps: number;
  /** Responses of any status per second (autocannon's own req/s). */
  rps: number;
  /** Latency of 2xx responses, milliseconds. */
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  /** 2xx responses whose body was not what the workload expects (e.g. `"active":false`). */
  mismatches: number;
  statusCodes: Record<string, number>;
  /**
   * CPU time per 2xx response during the run, ms, per process of the system under test (each
   * server; `postgres`: the database backends serving its databases; `redis`: the peer's
   * redis-server; `load-generator`: this
   * harness, which runs autocannon). Steadier than throughput when other work shares the machine.
   */
  cpuMsPerOk?: Record<string, number>;
  /** Set on the paced run (src/paced.ts): the rate offered, requests/s; latency from each due time. */
  pacedRate?: number;
  note?: string;
}

export type OutcomeStatus = 'measured' | 'unavailable' | 'failed';

export interface WorkloadOutcome {
  target: TargetLabel;
  workload: BenchName;
  status: OutcomeStatus;
  detail?: string;
  runs: RunRecord[];
  /** The run at `Workload.pacedRate`, after the saturating runs; not part of `runs`. */
  paced?: RunRecord;
  /** RSS of each server of the system right after this workload, MB: shows which workload grows memory. */
  rssAfterMb?: Record<string, number>;
}

export interface RunSettings {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  runs: number;
  onRecord: (record: RunRecord) => void;
  log: (line: string) => void;
  /** Cumulative CPU ms per process (`<group>` or `<group>:<pid>`), read before and after each run. */
  cpuProbe?: () => Promise<Map<string, number>>;
}

let active: autocannon.Instance | undefined;

/** Stops the autocannon instance in flight, if any (Ctrl+C, deadline). */
export function stopActiveLoad(): void {
  active?.stop();
}

function runAutocannon(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      active = undefined;
      if (error) reject(error);
      else resolve(result);
    });
    active = instance;
  });
}

export async function runWorkload(
  target: TargetLabel,
  workload: Workload,
  settings: RunSettings,
): Promise<WorkloadOutcome> {
  const outcome: WorkloadOutcome = { target, workload: workload.name, status: 'measured', runs: [] };
  const fail = (status: OutcomeStatus, detail: string) => {
    outcome.status = status;
    outcome.detail = detail;
    settings.log(`${target} ${workload.name}: ${status}: ${detail}`);
    return outcome;
  };

  try {
    const preflight = await workload.preflight();
    if (!preflight.ok) return fail(preflight.unavailable ? 'unavailable' : 'failed', preflight.detail);

    let expectedRps: number | undefined;
    if (settings.warmupSeconds > 0) {
      const plan = await workload.plan({
        phase: 'warmup',
        seconds: settings.warmupSeconds,
        connections: settings.connections,
      });
      if (plan.drive) {
        const warm = await plan.drive(settings.warmupSeconds);
        expectedRps = warm.ok / Math.max(warm.seconds, 0.01);
      } else {
        const warm = await runAutocannon(
          autocannonOptions(plan.options, settings, settings.warmupSeconds, plan.amount),
        );
        expectedRps = warm['2xx'] / Math.max(warm.duration, 0.01);
      }
    }

    for (let run = 1; run <= settings.runs; run++) {
      const plan = await workload.plan({
        phase: 'measure',
        seconds: settings.seconds,
        connections: settings.connections,
        ...(expectedRps === undefined ? {} : { expectedRps }),
      });
      const cpuBefore = await settings.cpuProbe?.();
      const { record, ok } = await measuredRun(target, workload.name, run, plan, settings);
      const cpuAfter = await settings.cpuProbe?.();
      if (cpuBefore && cpuAfter && ok > 0) {
        record.cpuMsPerOk = cpuPerResponse(cpuBefore, cpuAfter, ok);
      }
      outcome.runs.push(record);
      settings.onRecord(record);
      // The latest measured rate sizes the next run of workloads that spend pre-issued material.
      expectedRps = record.okRps;
    }

    if (workload.paced !== undefined) {
      const { rate } = workload.paced;
      const plan = await workload.paced.plan({
        seconds: settings.seconds,
        connections: settings.connections,
      });
      const cpuBefore = await settings.cpuProbe?.();
      const result = await runPaced(plan, {
        rate,
        seconds: settings.seconds,
        connections: settings.connections,
      });
      const cpuAfter = await settings.cpuProbe?.();
      const record = pacedRecord(
        target,
        workload.name,
        settings.runs + 1,
        rate,
        settings.connections,
        result,
        plan.note,
      );
      if (cpuBefore && cpuAfter && result.ok > 0) {
        record.cpuMsPerOk = cpuPerResponse(cpuBefore, cpuAfter, result.ok);
      }
      outcome.paced = record;
      settings.onRecord(record);
    }
  } catch (error) {
    return fail('failed', error instanceof Error ? error.message : String(error));
  }

  if (outcome.runs.every((run) => run.okRps === 0)) {
    const codes = JSON.stringify(outcome.runs[0]?.statusCodes ?? {});
    return fail(
      'failed',
      `no 2xx response in any run (status codes ${codes}, errors ${outcome.runs[0]?.errors ?? 0})`,
    );
  }
  return outcome;
}

/** One measured run: autocannon, or the workload's own driver (`RunPlan.drive`). */
async function measuredRun(
  target: TargetLabel,
  workload: BenchName,
  run: number,
  plan: RunPlan,
  settings: RunSettings,
): Promise<{ record: RunRecord; ok: number }> {
  if (plan.drive) {
    const result = await plan.drive(settings.seconds);
    const { pacedRate: _, ...record } = pacedRecord(
      target,
      workload,
      run,
      0,
      settings.connections,
      result,
      plan.note,
    );
    return { record, ok: result.ok };
  }
  const result = await runAutocannon(
    autocannonOptions(plan.options, settings, settings.seconds, plan.amount),
  );
  return { record: toRecord(target, workload, run, result, plan.note), ok: result['2xx'] };
}

function autocannonOptions(
  options: autocannon.Options,
  settings: RunSettings,
  seconds: number,
  amount: number | undefined,
): autocannon.Options {
  return {
    ...options,
    connections: settings.connections,
    pipelining: 1,
    timeout: 10,
    ...(amount === undefined ? { duration: seconds } : { amount }),
  };
}

function toRecord(
  target: TargetLabel,
  workload: BenchName,
  run: number,
  result: autocannon.Result,
  note: string | undefined,
): RunRecord {
  const seconds = Math.max(result.duration, 0.01);
  const responses = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  const statusCodes: Record<string, number> = {};
  for (const [status, stats] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[status] = stats.count ?? 0;
  return {
    type: 'run',
    target,
    workload,
    run,
    connections: result.connections,
    seconds,
    responses,
    okRps: round(result['2xx'] / seconds),
    rps: round(responses / seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    statusCodes,
    ...(note ? { note } : {}),
  };
}

function pacedRecord(
  target: TargetLabel,
  workload: BenchName,
  run: number,
  rate: number,
  connections: number,
  result: PacedResult,
  note: string | undefined,
): RunRecord {
  const seconds = Math.max(result.seconds, 0.01);
  const responses = Object.values(result.statusCodes).reduce((sum, count) => sum + count, 0);
  return {
    type: 'run',
    target,
    workload,
    run,
    connections,
    seconds: round(seconds),
    responses,
    okRps: round(result.ok / seconds),
    rps: round(responses / seconds),
    p50: result.p50,
    p99: result.p99,
    max: result.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: 0,
    mismatches: result.mismatches,
    statusCodes: result.statusCodes,
    pacedRate: rate,
    ...(note ? { note } : {}),
  };
}

/**
 * CPU ms per 2xx response by group (the part of a key before `:`, e.g. every `postgres:<pid>`
 * backend summed into `postgres`), from two probe readings.
 */
export function cpuPerResponse(
  before: Map<string, number>,
  after: Map<string, number>,
  responses: number,
): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const [key, end] of after) {
    const group = key.split(':')[0] ?? key;
    // A backend that connected during the run started from zero.
    totals[group] = (totals[group] ?? 0) + Math.max(0, end - (before.get(key) ?? 0));
  }
  for (const group of Object.keys(totals)) {
    // 0.1 µs: finer than a clock tick spread over a run's responses, so rounding never shows.
    totals[group] = Math.round(((totals[group] ?? 0) / responses) * 10_000) / 10_000;
  }
  return totals;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
