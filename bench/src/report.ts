/**
 * Turns the run records into the summary: one row per workload (ours on PostgreSQL and PGlite,
 * the peer, the ceiling, the ratios), the targets with PASS/FAIL, the RSS of every server, and the
 * same as markdown for the README. Missing a target never changes the exit code.
 */

import type { SigningCeiling } from './peers/signing.js';
import type { PinPlan } from './pinning.js';
import type { RunRecord, TargetLabel, WorkloadOutcome } from './runner.js';
import { type BenchName, WORKLOAD_NAMES, type WorkloadName } from './workloads/types.js';

export interface RssRecord {
  server: string;
  /** Right after /health/ready answered, before any load. */
  readyRssMb: number;
  /** Highest 500 ms sample over the server's whole life in the run. */
  maxRssMb: number;
}

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  postgres: string;
  loadAverageAtStart: number[];
  loadAverageAtEnd?: number[];
}

export interface BenchReport {
  startedAt: string;
  mode: 'full' | 'smoke';
  settings: {
    connections: number;
    seconds: number;
    warmupSeconds: number;
    runs: number;
    dbs: string[];
    /** How our servers were started (`--start`); absent in results from before the option. */
    start?: 'bundle' | 'tsx';
    /** The web client's `id_token_signed_response_alg` (`refresh`, `code`); absent in older results. */
    idTokenAlg?: 'RS256' | 'ES256';
    /** `--pin`: where the servers and the load generator ran, or why they were not pinned. */
    pin?: PinPlan;
  };
  machine: MachineInfo;
  outcomes: WorkloadOutcome[];
  signing: SigningCeiling[];
  rss: RssRecord[];
  startFailures: { server: string; detail: string }[];
}

interface Aggregate {
  okRps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/**
 * CPU per 2xx response, µs, mean over the runs: the server that answered, and its store (the
 * PostgreSQL backends serving our databases, or the oidc-provider peer's redis-server).
 */
export interface CpuPerOk {
  serverUs: number;
  /** Absent when the system has no PostgreSQL database (PGlite, the peers, bare Fastify). */
  postgresUs?: number;
  /** The redis-server of the oidc-provider peer on Redis; absent elsewhere. */
  redisUs?: number;
}

/** Server plus store: what one request costs the machine, whichever process spends it. */
export function totalUs(cpu: CpuPerOk): number {
  return round1(cpu.serverUs + (cpu.postgresUs ?? 0) + (cpu.redisUs ?? 0));
}

export interface CpuSummary {
  ours: CpuPerOk | undefined;
  pglite: CpuPerOk | undefined;
  peer: CpuPerOk | undefined;
  /** oidc-provider on Redis, its redis-server included. */
  peerRedis: CpuPerOk | undefined;
  /** What the workload cannot go below: the bare route (plus one signature for `cc-jwt`). */
  ceiling: (CpuPerOk & { label: string }) | undefined;
  /** Server CPU, ours ÷ oidc-provider: below 1 means we spend less per request. */
  vsPeer: number | undefined;
  /** The same with our PostgreSQL backends added to our side (the peer keeps its tokens in memory). */
  vsPeerWithPostgres: number | undefined;
  /** Sums, ours (server + PostgreSQL) ÷ oidc-provider on Redis (server + redis-server). */
  vsPeerRedis: number | undefined;
}

type Cell = Aggregate | { status: 'unavailable' | 'failed' | 'not run'; detail?: string };

export interface SummaryRow {
  workload: WorkloadName;
  ours: Cell;
  pglite: Cell;
  /** What ratios and targets read: PostgreSQL, or PGlite when PostgreSQL was not run. */
  primary: Cell;
  peer: { label: string; cell: Cell } | undefined;
  /** oidc-provider on Redis, for the workloads it runs. */
  peerRedis: Cell | undefined;
  ceiling: { label: string; okRps: number } | undefined;
  vsPeer: number | undefined;
  /** 2xx/s, ours ÷ oidc-provider on Redis. */
  vsPeerRedis: number | undefined;
  vsCeiling: number | undefined;
  /** The open-loop run at the target's rate (`Workload.paced`) of the primary target, if any. */
  paced: RunRecord | undefined;
  /** The headline: CPU per 2xx response of every server (absent in results from before it was measured). */
  cpu?: CpuSummary;
}

export interface TargetCheck {
  target: string;
  measured: string;
  result: 'PASS' | 'FAIL' | 'n/a' | 'not evaluated (smoke)';
}

/** The workloads oidc-provider runs, on its in-memory adapter (`oidc-provider`) and on Redis. */
const PEER_WORKLOADS: ReadonlySet<WorkloadName> = new Set([
  'cc-jwt',
  'cc-opaque',
  'introspect',
  'refresh',
  'code',
  'signin',
  'signin-cheap-hash',
  'discovery',
  'jwks',
]);
const PEER: Partial<Record<WorkloadName, TargetLabel>> = Object.fromEntries(
  [...PEER_WORKLOADS].map((workload) => [workload, 'oidc-provider']),
);

export const RSS_TARGET_MB = 150;

function isAggregate(cell: Cell | undefined): cell is Aggregate {
  return cell !== undefined && 'okRps' in cell;
}

/** Mean throughput and p50 over the runs, worst p99: the fair reading of a few noisy runs. */
function aggregate(runs: RunRecord[]): Aggregate {
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    okRps: Math.round(mean(runs.map((run) => run.okRps))),
    p50: round2(mean(runs.map((run) => run.p50))),
    p99: Math.max(...runs.map((run) => run.p99)),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

/** numerator ÷ denominator, or undefined when either is missing or the denominator is not positive. */
export function ratioOf(numerator: number | undefined, denominator: number | undefined): number | undefined {
  if (numerator === undefined || denominator === undefined || !(denominator > 0)) return undefined;
  return numerator / denominator;
}

/**
 * The process that answers a workload's requests, as named in `cpuMsPerOk`: our orders service for
 * the orders workloads, our auth server for the others, and each peer or ceiling its own.
 */
export function servingServer(target: TargetLabel, workload: BenchName): string {
  if (target === 'ours-postgres' || target === 'ours-pglite') {
    const app = workload.startsWith('orders-') ? 'orders' : 'auth-server';
    return `${app}-${target === 'ours-postgres' ? 'postgres' : 'pglite'}`;
  }
  return target;
}

/** Mean CPU per 2xx over the runs that recorded it, in µs; undefined when no run did. */
export function cpuPerOk(runs: RunRecord[], server: string): CpuPerOk | undefined {
  const measured = runs.filter((run) => run.cpuMsPerOk?.[server] !== undefined);
  if (measured.length === 0) return undefined;
  const meanUs = (values: number[]) =>
    round1((values.reduce((sum, value) => sum + value, 0) / values.length) * 1000);
  const result: CpuPerOk = { serverUs: meanUs(measured.map((run) => run.cpuMsPerOk?.[server] ?? 0)) };
  for (const [store, field] of [
    ['postgres', 'postgresUs'],
    ['redis', 'redisUs'],
  ] as const) {
    const withStore = measured.filter((run) => run.cpuMsPerOk?.[store] !== undefined);
    if (withStore.length > 0) result[field] = meanUs(withStore.map((run) => run.cpuMsPerOk?.[store] ?? 0));
  }
  return result;
}

function cpuFor(outcomes: WorkloadOutcome[], target: TargetLabel, workload: BenchName): CpuPerOk | undefined {
  const outcome = outcomes.find(
    (candidate) => candidate.target === target && candidate.workload === workload,
  );
  if (outcome?.status !== 'measured') return undefined;
  return cpuPerOk(outcome.runs, servingServer(target, workload));
}

function cpuCeiling(report: BenchReport, workload: WorkloadName): CpuSummary['ceiling'] {
  if (workload === 'orders-create' || workload === 'orders-list') {
    const barePg = cpuFor(report.outcomes, 'bare-pg', workload);
    return barePg && { ...barePg, label: 'bare-pg' };
  }
  // cc-jwt: the bare token route measured in the same run (parse, one ES256 signature, answer).
  const tokenFloor =
    workload === 'cc-jwt' ? cpuFor(report.outcomes, 'bare-fastify', 'token-floor') : undefined;
  if (tokenFloor)
    return { serverUs: tokenFloor.serverUs, label: 'bare-fastify token route: form + 1 ES256 sign' };
  const bare = cpuFor(report.outcomes, 'bare-fastify', 'http-ceiling');
  if (!bare) return undefined;
  const signing = report.signing.find((ceiling) => ceiling.library === 'node:crypto');
  if (workload !== 'cc-jwt' || !signing || signing.signaturesPerSecond <= 0) {
    return { serverUs: bare.serverUs, label: 'bare-fastify' };
  }
  // Without the measured floor: the bare route plus one signature (measured on one core, in-process).
  return {
    serverUs: round1(bare.serverUs + 1e6 / signing.signaturesPerSecond),
    label: 'bare-fastify + 1 ES256 sign (node:crypto)',
  };
}

function cpuSummary(report: BenchReport, workload: WorkloadName, primaryLabel: TargetLabel): CpuSummary {
  const ours = cpuFor(report.outcomes, 'ours-postgres', workload);
  const pglite = cpuFor(report.outcomes, 'ours-pglite', workload);
  const primary = primaryLabel === 'ours-postgres' ? ours : pglite;
  const peerLabel = PEER[workload];
  const peer = peerLabel ? cpuFor(report.outcomes, peerLabel, workload) : undefined;
  const peerRedis = PEER_WORKLOADS.has(workload)
    ? cpuFor(report.outcomes, 'oidc-provider-redis', workload)
    : undefined;
  return {
    ours,
    pglite,
    peer,
    peerRedis,
    ceiling: cpuCeiling(report, workload),
    vsPeer: ratioOf(primary?.serverUs, peer?.serverUs),
    vsPeerWithPostgres:
      primary?.postgresUs === undefined
        ? undefined
        : ratioOf(primary.serverUs + primary.postgresUs, peer?.serverUs),
    vsPeerRedis: ratioOf(primary && totalUs(primary), peerRedis && totalUs(peerRedis)),
  };
}

function cellFor(outcomes: WorkloadOutcome[], target: TargetLabel, workload: BenchName): Cell {
  const outcome = outcomes.find(
    (candidate) => candidate.target === target && candidate.workload === workload,
  );
  if (!outcome) return { status: 'not run' };
  if (outcome.status !== 'measured' || outcome.runs.length === 0) {
    return {
      status: outcome.status === 'measured' ? 'failed' : outcome.status,
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    };
  }
  return aggregate(outcome.runs);
}

export function summarize(report: BenchReport): SummaryRow[] {
  const httpCeiling = cellFor(report.outcomes, 'bare-fastify', 'http-ceiling');
  const jose = report.signing.find((ceiling) => ceiling.library === 'jose');
  return WORKLOAD_NAMES.map((workload) => {
    const ours = cellFor(report.outcomes, 'ours-postgres', workload);
    const pglite = cellFor(report.outcomes, 'ours-pglite', workload);
    // Ratios and targets read PostgreSQL; PGlite stands in only when PostgreSQL was not measured.
    const primaryLabel: TargetLabel =
      isAggregate(ours) || ours.status !== 'not run' ? 'ours-postgres' : 'ours-pglite';
    const primary = primaryLabel === 'ours-postgres' ? ours : pglite;
    const paced = report.outcomes.find(
      (outcome) => outcome.target === primaryLabel && outcome.workload === workload,
    )?.paced;
    const peerLabel = PEER[workload];
    const peer = peerLabel
      ? { label: peerLabel, cell: cellFor(report.outcomes, peerLabel, workload) }
      : undefined;

    let ceiling: SummaryRow['ceiling'];
    if (workload === 'orders-create' || workload === 'orders-list') {
      const barePg = cellFor(report.outcomes, 'bare-pg', workload);
      if (isAggregate(barePg)) ceiling = { label: 'bare-pg', okRps: barePg.okRps };
    } else if (workload === 'cc-jwt') {
      if (jose)
        ceiling = { label: 'ES256 sign/s (jose, 1 core)', okRps: Math.round(jose.signaturesPerSecond) };
    } else if (isAggregate(httpCeiling)) {
      ceiling = { label: 'bare-fastify', okRps: httpCeiling.okRps };
    }

    const primaryRps = isAggregate(primary) ? primary.okRps : undefined;
    const peerRedis = PEER_WORKLOADS.has(workload)
      ? cellFor(report.outcomes, 'oidc-provider-redis', workload)
      : undefined;
    return {
      workload,
      ours,
      pglite,
      primary,
      peer,
      peerRedis,
      ceiling,
      vsPeer: ratioOf(primaryRps, peer && isAggregate(peer.cell) ? peer.cell.okRps : undefined),
      vsPeerRedis: ratioOf(primaryRps, isAggregate(peerRedis) ? peerRedis.okRps : undefined),
      vsCeiling: ratioOf(primaryRps, ceiling?.okRps),
      paced,
      cpu: cpuSummary(report, workload, primaryLabel),
    };
  });
}

export function checkTargets(report: BenchReport, rows: SummaryRow[]): TargetCheck[] {
  const row = (name: WorkloadName) => rows.find((candidate) => candidate.workload === name);
  const verdict = (pass: boolean | undefined): TargetCheck['result'] => {
    if (pass === undefined) return 'n/a';
    if (report.mode === 'smoke') return 'not evaluated (smoke)';
    return pass ? 'PASS' : 'FAIL';
  };
  const checks: TargetCheck[] = [];

  const ratioTarget = (name: WorkloadName, minimum: number, against: string) => {
    const ratio =
      name === 'orders-create' || name === 'orders-list' ? row(name)?.vsCeiling : row(name)?.vsPeer;
    checks.push({
      target: `${name} ≥ ${minimum >= 1 ? `${minimum}×` : `${minimum * 100} % of`} ${against}`,
      measured: ratio === undefined ? describeMissing(row(name)?.primary) : `${ratio.toFixed(2)}×`,
      result: verdict(ratio === undefined ? undefined : ratio >= minimum),
    });
  };
  ratioTarget('cc-jwt', 2, 'oidc-provider');
  ratioTarget('introspect', 1, 'oidc-provider');

  // Throughput from the saturating runs; p99 from the open-loop run at the target's rate, which
  // must also have been served in full (every offered request answered 2xx).
  const rateTarget = (name: 'refresh' | 'code', rate: number) => {
    const saturated = row(name)?.primary;
    const paced = row(name)?.paced;
    const pacedServed = paced !== undefined && paced.non2xx + paced.errors + paced.mismatches === 0;
    const rateText = rate.toLocaleString('en-US');
    checks.push({
      target: `${name} ≥ ${rateText}/s, p99 < 25 ms at ${rateText}/s`,
      measured: isAggregate(saturated)
        ? `${saturated.okRps}/s; at ${rateText}/s ${paced ? `p99 ${paced.p99} ms${pacedServed ? '' : ' (not all served)'}` : 'not run'}`
        : describeMissing(saturated),
      result: verdict(
        isAggregate(saturated) && paced !== undefined
          ? saturated.okRps >= rate && pacedServed && paced.p99 < 25
          : undefined,
      ),
    });
  };
  rateTarget('refresh', 1000);
  rateTarget('code', 500);
  ratioTarget('orders-list', 0.7, 'bare-pg');
  ratioTarget('orders-create', 0.7, 'bare-pg');

  // The target is for the production configuration (PostgreSQL). PGlite embeds a WebAssembly
  // PostgreSQL in the process, so its RSS is listed but not held to the same bound.
  const measuredOnPostgres = report.rss.some((entry) => /^(auth-server|orders)-postgres$/.test(entry.server));
  const rssPattern = measuredOnPostgres ? /^(auth-server|orders)-postgres$/ : /^(auth-server|orders)-/;
  for (const server of report.rss.filter((entry) => rssPattern.test(entry.server))) {
    checks.push({
      target: `RSS of ${server.server} < ${RSS_TARGET_MB} MB`,
      measured: `${server.maxRssMb} MB`,
      result: verdict(server.maxRssMb < RSS_TARGET_MB),
    });
  }
  return checks;
}

function describeMissing(cell: Cell | undefined): string {
  if (!cell || isAggregate(cell)) return 'not measured';
  return cell.status;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

function formatCell(cell: Cell): string {
  if (!isAggregate(cell)) return cell.status;
  const failures = cell.non2xx + cell.errors;
  return `${cell.okRps.toLocaleString('en-US')} (p50 ${cell.p50} / p99 ${cell.p99} ms${failures > 0 ? `, ${failures} failed` : ''})`;
}

function ratio(value: number | undefined): string {
  return value === undefined ? '–' : `${value.toFixed(2)}×`;
}

function tableCells(rows: SummaryRow[]): string[][] {
  return rows.map((row) => [
    row.workload,
    formatCell(row.ours),
    formatCell(row.pglite),
    row.peer ? `${formatCell(row.peer.cell)}` : '–',
    row.peerRedis ? formatCell(row.peerRedis) : '–',
    row.ceiling ? `${row.ceiling.okRps.toLocaleString('en-US')} (${row.ceiling.label})` : '–',
    ratio(row.vsPeer),
    ratio(row.vsPeerRedis),
    ratio(row.vsCeiling),
  ]);
}

/** µs with one decimal below 10 (where a tick of rounding matters), whole µs above. */
export function formatMicros(us: number): string {
  return us < 10 ? us.toFixed(1) : Math.round(us).toLocaleString('en-US');
}

function cpuCell(cpu: CpuPerOk | undefined): string {
  return cpu === undefined ? '–' : `${formatMicros(cpu.serverUs)} µs`;
}

/** `260 + 110 = 370 µs`: the server, its store, and the sum the ratios read. */
function cpuSumCell(cpu: CpuPerOk | undefined): string {
  if (cpu === undefined) return '–';
  const store = cpu.postgresUs ?? cpu.redisUs;
  if (store === undefined) return `${formatMicros(cpu.serverUs)} µs`;
  return `${formatMicros(cpu.serverUs)} + ${formatMicros(store)} = ${formatMicros(totalUs(cpu))} µs`;
}

/** Sums against the in-memory peer (whose store is its own heap), with the server-only ratio beside. */
function cpuRatio(cpu: CpuSummary): string {
  if (cpu.vsPeer === undefined) return '–';
  if (cpu.vsPeerWithPostgres === undefined) return `${cpu.vsPeer.toFixed(2)}×`;
  return `${cpu.vsPeerWithPostgres.toFixed(2)}× (servers alone ${cpu.vsPeer.toFixed(2)}×)`;
}

function cpuCeilingCell(ceiling: CpuSummary['ceiling']): string {
  if (!ceiling) return '–';
  const postgres =
    ceiling.postgresUs === undefined ? '' : ` + ${formatMicros(ceiling.postgresUs)} µs PostgreSQL`;
  return `${formatMicros(ceiling.serverUs)} µs${postgres} (${ceiling.label})`;
}

/** The headline table: CPU per 2xx response of every server, and ours ÷ oidc-provider. */
export function cpuTableCells(rows: SummaryRow[]): string[][] {
  return rows.map((row) => {
    const cpu = row.cpu;
    if (!cpu) return [row.workload, ...CPU_HEADER.slice(1).map(() => '–')];
    return [
      row.workload,
      cpuSumCell(cpu.ours),
      cpuCell(cpu.pglite),
      row.peer ? cpuCell(cpu.peer) : '–',
      row.peerRedis ? cpuSumCell(cpu.peerRedis) : '–',
      cpuCeilingCell(cpu.ceiling),
      cpuRatio(cpu),
      ratio(cpu.vsPeerRedis),
    ];
  });
}

export const CPU_HEADER = [
  'workload',
  'ours, PostgreSQL: server + its backends = CPU/2xx',
  'ours, PGlite: server CPU/2xx',
  'oidc-provider, memory: CPU/2xx',
  'oidc-provider, Redis: server + redis-server = CPU/2xx',
  'floor: CPU/2xx',
  'sums, ours ÷ oidc-provider memory',
  'sums, ours ÷ oidc-provider Redis',
];

export const THROUGHPUT_HEADER = [
  'workload',
  'ours, PostgreSQL: 2xx/s',
  'ours, PGlite: 2xx/s',
  'oidc-provider, memory: 2xx/s',
  'oidc-provider, Redis: 2xx/s',
  'ceiling',
  '2xx/s ours ÷ oidc-provider memory',
  '2xx/s ours ÷ oidc-provider Redis',
  'ours ÷ ceiling',
];

function textTable(header: string[], body: string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => (cells[column] ?? '').length)),
  );
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' │ ');
  return [line(header), widths.map((width) => '─'.repeat(width)).join('─┼─'), ...body.map(line)];
}

/** Where the processes ran: one sentence for the text and the markdown. */
export function placementLine(report: BenchReport): string {
  const pin = report.settings.pin;
  if (pin?.pinned) {
    return `Pinned with taskset: every server on CPU ${pin.serverCpu}, the load generator on CPU ${pin.loadCpu}; the stores (PostgreSQL's backends, the peer's redis-server) where the OS puts them.`;
  }
  const why = pin ? ` (--pin: ${pin.reason})` : '';
  return `The load generator and the server under test share these cores${why}.`;
}

export function formatText(report: BenchReport, rows: SummaryRow[], checks: TargetCheck[]): string {
  const out = [
    'CPU per 2xx response (utime + stime from /proc, µs; server + store = sum):',
    ...textTable(CPU_HEADER, cpuTableCells(rows)),
    '',
    'Throughput (2xx responses per second):',
    ...textTable(THROUGHPUT_HEADER, tableCells(rows)),
    '',
    placementLine(report),
    '',
  ];
  for (const ceiling of report.signing) {
    out.push(
      `signing ceiling, ES256 ${ceiling.library}: ${Math.round(ceiling.signaturesPerSecond).toLocaleString('en-US')} signatures/s (1 core)`,
    );
  }
  out.push(...pacedLines(report), ...loadGeneratorLines(report));
  for (const rss of report.rss)
    out.push(`RSS ${rss.server}: max ${rss.maxRssMb} MB (${rss.readyRssMb} MB when ready)`);
  out.push(...rssTimelines(report), '');
  for (const check of checks) out.push(`${check.result.padEnd(5)}  ${check.target}: ${check.measured}`);
  const problems = problemLines(report);
  if (problems.length > 0) out.push('', ...problems);
  return out.join('\n');
}

/** One line per open-loop run at a target's rate (src/paced.ts). */
function pacedLines(report: BenchReport): string[] {
  return report.outcomes.flatMap((outcome) => {
    const run = outcome.paced;
    if (run?.pacedRate === undefined) return [];
    const failed = run.non2xx + run.errors + run.mismatches;
    return [
      `${outcome.target} ${outcome.workload} at a steady ${run.pacedRate.toLocaleString('en-US')}/s offered (open loop, latency from each due time): ` +
        `${run.okRps.toLocaleString('en-US')} 2xx/s, p50 ${run.p50} / p99 ${run.p99} / max ${run.max} ms` +
        (failed > 0 ? `, ${failed} not served` : '') +
        cpuBreakdown(run.cpuMsPerOk),
    ];
  });
}

/** Above this share of one core the load generator, not the server, may set the throughput. */
export const LOAD_GENERATOR_BUSY = 0.9;

/**
 * Share of one core the load generator (this harness) used during a saturating run: its CPU per
 * 2xx × 2xx per second. Undefined for runs from before it was recorded.
 */
export function loadGeneratorBusy(run: RunRecord): number | undefined {
  const msPerOk = run.cpuMsPerOk?.['load-generator'];
  return msPerOk === undefined ? undefined : (msPerOk * run.okRps) / 1000;
}

/** One line per run in which the load generator had (almost) a core to itself and used all of it. */
function loadGeneratorLines(report: BenchReport): string[] {
  return report.outcomes.flatMap((outcome) =>
    outcome.runs.flatMap((run) => {
      const busy = loadGeneratorBusy(run);
      if (busy === undefined || busy < LOAD_GENERATOR_BUSY) return [];
      return [
        `${outcome.target} ${outcome.workload} run ${run.run}: the load generator used ${Math.round(busy * 100)} % of a core, so its throughput may be the load generator's limit rather than the server's (CPU per 2xx is not affected)`,
      ];
    }),
  );
}

/** `; CPU per 2xx: auth-server-postgres 380 µs, postgres 220 µs` from a run's `cpuMsPerOk`. */
function cpuBreakdown(cpuMsPerOk: Record<string, number> | undefined): string {
  const parts = Object.entries(cpuMsPerOk ?? {}).map(
    ([process, ms]) => `${process} ${formatMicros(ms * 1000)} µs`,
  );
  return parts.length === 0 ? '' : `; CPU per 2xx: ${parts.join(', ')}`;
}

/** One line per server: its RSS after each workload, in run order. */
function rssTimelines(report: BenchReport): string[] {
  const timelines = new Map<string, string[]>();
  for (const outcome of report.outcomes) {
    for (const [server, mb] of Object.entries(outcome.rssAfterMb ?? {})) {
      const steps = timelines.get(server) ?? [];
      steps.push(`${outcome.workload} ${mb}`);
      timelines.set(server, steps);
    }
  }
  return [...timelines].map(
    ([server, steps]) => `RSS of ${server} after each workload (MB): ${steps.join(', ')}`,
  );
}

function problemLines(report: BenchReport): string[] {
  const lines: string[] = [];
  for (const failure of report.startFailures)
    lines.push(`server failed to start: ${failure.server}: ${firstLine(failure.detail)}`);
  for (const outcome of report.outcomes) {
    if (outcome.status !== 'measured')
      lines.push(
        `${outcome.target} ${outcome.workload}: ${outcome.status}: ${firstLine(outcome.detail ?? '')}`,
      );
  }
  return lines;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 240 ? `${line.slice(0, 240)}…` : line;
}

export function formatMarkdown(report: BenchReport, rows: SummaryRow[], checks: TargetCheck[]): string {
  const escapePipes = (cell: string) => cell.replace(/\|/g, '\\|');
  const row = (cells: string[]) => `| ${cells.map(escapePipes).join(' | ')} |`;
  const table = (header: string[], body: string[][]) => [
    row(header),
    row(header.map(() => '---')),
    ...body.map(row),
  ];
  const { settings, machine } = report;
  const out = [
    `# Benchmark results (${report.mode}, ${report.startedAt})`,
    '',
    `${settings.connections} connections, ${settings.seconds} s per run, ${settings.runs} run(s) after a ${settings.warmupSeconds} s warm-up; ` +
      'throughput is 2xx responses per second (mean of the runs), latency of 2xx responses (mean p50, worst p99).' +
      (settings.start === undefined
        ? ''
        : settings.start === 'bundle'
          ? " Our servers run as `pnpm start` runs them: the esbuild bundle on plain node with the start script's node flags."
          : ' Our servers run as `node --import tsx src/server.ts`.') +
      (settings.idTokenAlg === undefined
        ? ''
        : ` ID Tokens of \`refresh\` and \`code\` are signed ${settings.idTokenAlg} (the web client's \`id_token_signed_response_alg\`).`),
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}, PostgreSQL ${machine.postgres}; ` +
      `load average at start ${machine.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}` +
      (machine.loadAverageAtEnd
        ? `, at end ${machine.loadAverageAtEnd.map((value) => value.toFixed(2)).join(' ')}`
        : '') +
      `. ${placementLine(report)}`,
    '',
    'CPU per 2xx response (utime + stime of each process from /proc, mean of the runs): each server plus its store ' +
      "(our PostgreSQL backends, the peer's redis-server; the in-memory peer's store is its own heap), and the sums' ratios:",
    '',
    ...table(CPU_HEADER, cpuTableCells(rows)),
    '',
    'Throughput:',
    '',
    ...table(THROUGHPUT_HEADER, tableCells(rows)),
    '',
    ...report.signing.map(
      (ceiling) =>
        `- Signing ceiling, ES256 with ${ceiling.library}: ${Math.round(ceiling.signaturesPerSecond).toLocaleString('en-US')} signatures/s on one core.`,
    ),
    ...pacedLines(report).map((line) => `- ${line}.`),
    ...loadGeneratorLines(report).map((line) => `- ${line}.`),
    ...report.rss.map(
      (rss) => `- RSS of ${rss.server}: max ${rss.maxRssMb} MB (${rss.readyRssMb} MB when ready).`,
    ),
    ...rssTimelines(report).map((line) => `- ${line}.`),
    '',
    ...table(
      ['target', 'measured', 'result'],
      checks.map((check) => [check.target, check.measured, check.result]),
    ),
  ];
  const problems = problemLines(report);
  if (problems.length > 0) out.push('', ...problems.map((line) => `- ${line}`));
  return `${out.join('\n')}\n`;
}
