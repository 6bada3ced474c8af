import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import { databaseFailoverTally } from './failover-pool.js';

/** Connections of a node-postgres pool; undefined on PGlite (one in-process session, no pool). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface MetricsOptions {
  /** Prefix of every metric name: `auth_server_`, `orders_`. */
  prefix: string;
  /** METRICS_TOKEN: a caller that is not on loopback must send `Authorization: Bearer <token>`. */
  token: string | undefined;
  poolStats: () => PoolStats | undefined;
  /** The database handle's `ping`: `<prefix>database_up` is 1 when it answers within 1 s. */
  ping: (timeoutMs: number) => Promise<void>;
  /** The app's own counters (tokens issued, sign-ins, …), registered on the same registry. */
  metrics: readonly Metric[];
}

/**
 * Prometheus metrics (prom-client) at GET /metrics: Node's process metrics, every request counted
 * and timed by route pattern (never the raw URL: bounded label values) and status, the database
 * pool, and the app's own counters. Register before the routes (the hooks must see them all).
 * Scraping is allowed from loopback without a token (a sidecar or `curl` on the host), and from
 * anywhere else only with METRICS_TOKEN; the address is the socket's, never X-Forwarded-For,
 * so a request through the gateway is never "loopback".
 */
export async function registerMetrics(app: FastifyInstance, options: MetricsOptions): Promise<Registry> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: options.prefix });
  for (const metric of options.metrics) registry.registerMetric(metric);
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({
    name: `${options.prefix}http_requests_total`,
    help: 'HTTP requests answered, by route pattern and status',
    labelNames,
    registers: [registry],
  });
  const durations = new Histogram({
    name: `${options.prefix}http_request_duration_seconds`,
    help: 'Time to answer an HTTP request, by route pattern and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: `${options.prefix}db_pool_connections`,
    help: 'node-postgres pool connections by state (absent on PGlite)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = options.poolStats();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  registerDatabaseUp(registry, options);
  registerDatabaseFailoverCounters(registry, options.prefix);
  // A callback hook: it runs on every response and does no I/O, so no promise is made for it.
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    };
    requests.inc(labels);
    durations.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (request, reply) => {
    const refusal = metricsRefusal(request, options.token);
    if (refusal) return reply.code(refusal.status).type('text/plain; charset=utf-8').send(refusal.message);
    return sendMetrics(reply, registry);
  });
  return registry;
}

const DATABASE_UP_TIMEOUT_MS = 1000;

/**
 * 1 when the database answers `select 1` within 1 s at scrape time, else 0: what the
 * "database unavailable" alert reads (deploy/prometheus/rules.yml). Asked at each scrape, like
 * readiness, so it needs no timer and costs nothing between scrapes.
 */
function registerDatabaseUp(registry: Registry, options: MetricsOptions): void {
  new Gauge({
    name: `${options.prefix}database_up`,
    help: 'Whether the database answered select 1 within 1 s at this scrape (1) or not (0)',
    registers: [registry],
    async collect() {
      try {
        await options.ping(DATABASE_UP_TIMEOUT_MS);
        this.set(1);
      } catch {
        this.set(0);
      }
    },
  });
}

/**
 * The pool's failover handling (failover-pool.ts), by failure kind: statements that met a database
 * failure, statements sent again (safe to repeat), and pool refreshes. Read from the process-wide
 * tally at scrape time.
 */
function registerDatabaseFailoverCounters(registry: Registry, prefix: string): void {
  const counters = [
    [
      'database_failures_total',
      'Database statements that failed with an outage or failover error, by kind',
      databaseFailoverTally.failures,
    ],
    [
      'database_retries_total',
      'Failed database statements sent again because that was safe (a read, or never committed), by kind',
      databaseFailoverTally.retries,
    ],
    [
      'database_pool_refreshes_total',
      'Connection pools replaced after a failover error, by kind',
      databaseFailoverTally.poolRefreshes,
    ],
  ] as const;
  for (const [name, help, tally] of counters) {
    new Counter({
      name: `${prefix}${name}`,
      help,
      labelNames: ['kind'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [kind, value] of tally) this.inc({ kind }, value);
      },
    });
  }
}

async function sendMetrics(reply: FastifyReply, registry: Registry) {
  return reply
    .type(registry.contentType)
    .header('cache-control', 'no-store')
    .send(await registry.metrics());
}

function metricsRefusal(request: FastifyRequest, token: string | undefined) {
  if (isLoopback(request.socket.remoteAddress)) return undefined;
  if (token === undefined) {
    return {
      status: 403,
      message: 'metrics are served to loopback only: set METRICS_TOKEN to scrape from elsewhere\n',
    };
  }
  const presented = /^Bearer ([^\s]+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
  if (!sameSecret(presented, token))
    return { status: 401, message: 'send Authorization: Bearer <METRICS_TOKEN>\n' };
  return undefined;
}

function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}
