/**
 * GET /metrics: Prometheus text from prom-client; requests are counted by route
 * pattern and status, audit events by name, the database pool is reported on PostgreSQL; scraping
 * from other than loopback needs METRICS_TOKEN, decided on the socket's address.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, withApiKey } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database, { environment: { METRICS_TOKEN, TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await app?.close();
  await database?.dispose();
});

async function scrape(): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.body;
}

function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('GET /metrics', () => {
  it('counts requests by route pattern and status, and audit events by name', async () => {
    const before = await scrape();
    const user = await app.inject({
      method: 'POST',
      url: '/users',
      headers: withApiKey,
      payload: { email: `metrics-${Date.now()}@example.test` },
    });
    expect(user.statusCode).toBe(201);
    const order = await app.inject({ method: 'GET', url: `/orders/${'0'.repeat(8)}`, headers: withApiKey });
    const refused = await app.inject({ method: 'POST', url: '/orders', payload: {} });
    expect(refused.statusCode).toBe(403);
    const after = await scrape();

    const moved = (series: string) => sample(after, series) - sample(before, series);
    expect(moved('orders_http_requests_total{method="POST",route="/users",status_code="201"}')).toBe(1);
    expect(
      moved(`orders_http_requests_total{method="GET",route="/orders/:id",status_code="${order.statusCode}"}`),
    ).toBe(1);
    expect(
      moved('orders_http_request_duration_seconds_count{method="POST",route="/users",status_code="201"}'),
    ).toBe(1);
    expect(moved('orders_audit_events_total{event="orders.api_key.rejected"}')).toBe(1);
    expect(after).not.toContain(`route="/orders/${'0'.repeat(8)}"`);
    expect(after).toMatch(/^orders_process_cpu_seconds_total /m);
    // What the DatabaseUnavailable alert reads (deploy/prometheus/rules.yml).
    expect(after).toMatch(/^orders_database_up 1$/m);
    if (database.handle.driver === 'pg')
      expect(after).toMatch(/^orders_db_pool_connections\{state="total"\} \d+/m);
  });

  it('from another address: 401 without or with a wrong token, 200 with METRICS_TOKEN; X-Forwarded-For does not help', async () => {
    const remoteAddress = '198.51.100.4';
    const get = (headers: Record<string, string> = {}) =>
      app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers });
    expect((await get()).statusCode).toBe(401);
    expect((await get({ 'x-forwarded-for': '127.0.0.1' })).statusCode).toBe(401);
    expect((await get({ authorization: 'Bearer wrong-token-000000000000000' })).statusCode).toBe(401);
    const allowed = await get({ authorization: `Bearer ${METRICS_TOKEN}` });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain('orders_http_requests_total');
  });

  it('without METRICS_TOKEN is loopback-only (403 naming the setting)', async () => {
    const plain = await buildTestApp(database);
    try {
      const response = await plain.inject({ method: 'GET', url: '/metrics', remoteAddress: '198.51.100.4' });
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('METRICS_TOKEN');
    } finally {
      await plain.close();
    }
  });
});
