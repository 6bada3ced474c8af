import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './free-port.js';
import { requireSystemProgram } from './system-programs.js';

/**
 * A throw-away Prometheus (Debian's `prometheus` package) for one suite: its own configuration and
 * storage in a temporary folder, a free loopback port, short scrape and evaluation intervals, the
 * repository's rule files. Stopped by its PID; the folder is removed.
 */

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const PROMTOOL_BIN = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';

/** The entry of deploy/ci/system-packages.json this fixture runs. */
export const prometheusRequires = 'prometheus';

export interface PrometheusOptions {
  /** Job name → `host:port` targets, scraped at `/metrics` over HTTP. */
  jobs: Record<string, string[]>;
  ruleFiles: string[];
  scrapeIntervalSeconds: number;
  evaluationIntervalSeconds: number;
}

export interface ScrapeTarget {
  labels: Record<string, string>;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

export interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

export interface Rule {
  name: string;
  query: string;
  type: 'recording' | 'alerting';
}

export interface Prometheus {
  readonly url: string;
  targets(): Promise<ScrapeTarget[]>;
  alerts(): Promise<Alert[]>;
  /** Every rule Prometheus loaded, with its query as Prometheus parsed it. */
  rules(): Promise<Rule[]>;
  /** An instant query; throws with Prometheus's error (a PromQL syntax error, say). */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  output(): string;
  stop(): Promise<void>;
}

function configuration(options: PrometheusOptions): string {
  // JSON is YAML: no YAML writer needed.
  return JSON.stringify({
    global: {
      scrape_interval: `${options.scrapeIntervalSeconds}s`,
      scrape_timeout: `${options.scrapeIntervalSeconds}s`,
      evaluation_interval: `${options.evaluationIntervalSeconds}s`,
    },
    rule_files: options.ruleFiles,
    scrape_configs: Object.entries(options.jobs).map(([job, targets]) => ({
      job_name: job,
      static_configs: [{ targets }],
    })),
  });
}

async function api<T>(url: string): Promise<T> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? response.status}`);
  return body.data;
}

export async function startPrometheus(options: PrometheusOptions): Promise<Prometheus> {
  requireSystemProgram(prometheusRequires, 'the Prometheus fixture');
  const check = spawnSync(PROMTOOL_BIN, ['check', 'rules', ...options.ruleFiles], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`promtool check rules failed:\n${check.stdout}${check.stderr}`);
  const directory = await mkdtemp(join(tmpdir(), 'e2e-prometheus-'));
  const configFile = join(directory, 'prometheus.yml');
  await writeFile(configFile, configuration(options));
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(directory, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const prometheus: Prometheus = {
    url,
    targets: async () =>
      (await api<{ activeTargets: ScrapeTarget[] }>(`${url}/api/v1/targets`)).activeTargets,
    alerts: async () => (await api<{ alerts: Alert[] }>(`${url}/api/v1/alerts`)).alerts,
    async rules() {
      const data = await api<{ groups: { rules: Rule[] }[] }>(`${url}/api/v1/rules`);
      return data.groups.flatMap((group) => group.rules);
    },
    async query(promql) {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `${url}/api/v1/query?${new URLSearchParams({ query: promql })}`,
      );
      return data.result;
    },
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killTimer);
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
  await waitForReady(prometheus, child);
  return prometheus;
}

async function waitForReady(prometheus: Prometheus, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${prometheus.url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    if (child.exitCode !== null || Date.now() > deadline) {
      await prometheus.stop();
      throw new Error(`prometheus did not start:\n${prometheus.output()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}
