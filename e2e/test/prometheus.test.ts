import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Prometheus, startPrometheus } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instances, startOnPrivatePostgres } from '../src/instances.js';
import type { PrivatePostgres } from '../src/postgres.js';
import { repositoryRoot } from '../src/processes.js';
import { exportedSeriesNames, metricNamesIn } from '../src/promql-names.js';

/**
 * The real Prometheus (Debian's package) with the repository's rules, scraping both apps started
 * as processes on a PostgreSQL server of the test's own: the targets are up, and stopping that
 * server fires DatabaseUnavailable for both apps (then resolves it once it is back). Every metric
 * the rules and the Grafana dashboard read is one the running apps export.
 */
const rulesFile = join(repositoryRoot, 'deploy', 'prometheus', 'rules.yml');
const dashboardFile = join(repositoryRoot, 'deploy', 'grafana', 'dashboard.json');

let postgres: PrivatePostgres;
let stack: Instances;
let prometheus: Prometheus;

const hostPort = (url: string) => new URL(url).host;

beforeAll(async () => {
  ({ postgres, stack } = await startOnPrivatePostgres({ DATABASE_CONNECT_TIMEOUT_MS: '1000' }));
  // Prometheus scrapes from 127.0.0.1: loopback, which the apps serve /metrics to without METRICS_TOKEN.
  prometheus = await startPrometheus({
    jobs: { 'auth-server': stack.authUrls.map(hostPort), orders: stack.ordersUrls.map(hostPort) },
    ruleFiles: [rulesFile],
    scrapeIntervalSeconds: 1,
    evaluationIntervalSeconds: 1,
  });
}, 180_000);
afterAll(async () => {
  await prometheus?.stop();
  await stack?.stop();
  await postgres?.destroy();
});

const databaseAlerts = async () =>
  (await prometheus.alerts()).filter((alert) => alert.labels.alertname === 'DatabaseUnavailable');

describe('Prometheus against both apps', () => {
  it('scrapes both apps: every target up, database_up 1, no alert firing', async () => {
    await expect
      .poll(async () => (await prometheus.targets()).map((t) => `${t.labels.job}:${t.health}`).sort(), {
        timeout: 60_000,
      })
      .toEqual(['auth-server:up', 'orders:up']);
    await expect
      .poll(
        async () =>
          (await prometheus.query('auth_server_database_up + on() orders_database_up'))[0]?.value[1],
      )
      .toBe('2');
    expect((await prometheus.alerts()).filter((alert) => alert.state === 'firing')).toEqual([]);
  });

  it('reads only metrics the apps export, in every rule and every dashboard panel (and Prometheus parses each)', async () => {
    const exported = new Set<string>(['up']);
    for (const url of [...stack.authUrls, ...stack.ordersUrls]) {
      const response = await fetch(`${url}/metrics`);
      expect(response.status).toBe(200);
      for (const name of exportedSeriesNames(await response.text())) exported.add(name);
    }
    const rules = await prometheus.rules();
    const recorded = new Set(rules.filter((rule) => rule.type === 'recording').map((rule) => rule.name));
    const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const panelExpressions = dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
    );
    const expressions = [
      ...rules.map((rule) => ({ where: `rule ${rule.name}`, expr: rule.query })),
      ...panelExpressions,
    ];
    expect(rules.length).toBeGreaterThanOrEqual(20);
    expect(panelExpressions.length).toBeGreaterThanOrEqual(20);
    const unknown: string[] = [];
    for (const { where, expr } of expressions) {
      const names = metricNamesIn(expr);
      expect(names.size, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const name of names)
        if (!exported.has(name) && !recorded.has(name)) unknown.push(`${where}: ${name}`);
    }
    expect(unknown).toEqual([]);
    // Grafana's $__rate_interval is at least four scrape intervals; Prometheus must parse every panel.
    for (const { where, expr } of panelExpressions) {
      await expect(prometheus.query(expr.replaceAll('$__rate_interval', '1m')), where).resolves.toBeDefined();
    }
  });

  it('fires DatabaseUnavailable for both apps when their PostgreSQL server stops, and resolves it when it is back', async () => {
    await postgres.stop();
    await expect
      .poll(
        async () =>
          (await databaseAlerts())
            .filter((alert) => alert.state === 'firing')
            .map((alert) => alert.labels.job)
            .sort(),
        { timeout: 90_000, interval: 500 },
      )
      .toEqual(['auth-server', 'orders']);
    const [firing] = await databaseAlerts();
    expect(firing?.labels.severity).toBe('page');
    // The apps are still scraped: the alert is about the database, not a dead process.
    expect((await prometheus.targets()).every((target) => target.health === 'up')).toBe(true);

    await postgres.start();
    await expect.poll(databaseAlerts, { timeout: 60_000, interval: 500 }).toEqual([]);
  });
});
