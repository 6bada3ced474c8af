/**
 * GET /metrics: Prometheus text from prom-client; after a sign-in and a token
 * request the counters have moved; scraping from other than loopback needs METRICS_TOKEN, decided
 * on the socket's address, never X-Forwarded-For.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { webClientTokens } from './helpers/flows.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { TEST_SECRETS } from './helpers/seed.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp({ env: { METRICS_TOKEN, TRUST_PROXY: '1' } }));
});
afterAll(() => close());

async function scrape(): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.body;
}

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('GET /metrics', () => {
  it('counts sign-ins, tokens by grant type and requests by route after a sign-in and a token request', async () => {
    const before = await scrape();
    const { browser, page } = await openLoginPage(app);
    const signedIn = await submitLogin(browser, page, 'alice', TEST_SECRETS.alicePassword);
    expect(signedIn.statusCode).toBe(303);
    const second = await openLoginPage(app);
    const failed = await submitLogin(second.browser, second.page, 'alice', 'not her password');
    expect(failed.statusCode).toBe(401);
    await webClientTokens(app);
    const after = await scrape();

    const moved = (series: string) => sample(after, series) - sample(before, series);
    expect(moved('auth_server_audit_events_total{event="auth.login.succeeded"}')).toBeGreaterThanOrEqual(1);
    expect(moved('auth_server_audit_events_total{event="auth.login.failed"}')).toBeGreaterThanOrEqual(1);
    expect(moved('auth_server_tokens_issued_total{grant_type="authorization_code"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(moved('auth_server_http_requests_total{method="POST",route="/token",status_code="200"}')).toBe(1);
    expect(
      moved(
        'auth_server_http_request_duration_seconds_count{method="POST",route="/token",status_code="200"}',
      ),
    ).toBe(1);
    // Route patterns, never raw URLs: the interaction id is not a label value.
    expect(after).toContain('route="/interaction/:id/login"');
    expect(after).toMatch(/^auth_server_process_cpu_seconds_total /m);
  });

  it('refuses a scrape from another address without the token (401 with a wrong one), and serves it with the token', async () => {
    const remoteAddress = '203.0.113.7';
    const anonymous = await app.inject({ method: 'GET', url: '/metrics', remoteAddress });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).toContain('METRICS_TOKEN');
    const wrong = await app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress,
      headers: { authorization: 'Bearer not-the-metrics-token-000000' },
    });
    expect(wrong.statusCode).toBe(401);
    const allowed = await app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress,
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain('auth_server_http_requests_total');
  });

  it('decides "loopback" on the socket, not on X-Forwarded-For (TRUST_PROXY=1 here)', async () => {
    const forged = await app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '203.0.113.7',
      headers: { 'x-forwarded-for': '127.0.0.1' },
    });
    expect(forged.statusCode).toBe(401);
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  it('is loopback-only: 403 from another address, naming the setting', async () => {
    const plain = await startTestApp();
    try {
      const response = await plain.app.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress: '203.0.113.7',
      });
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('METRICS_TOKEN');
      expect((await plain.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    } finally {
      await plain.close();
    }
  });
});

/** The series the alert rules read (deploy/prometheus/rules.yml, docs/operations.md). */
describe('GET /metrics: what the alert rules read', () => {
  it('reports the database up and the age of the active ES256 and RS256 signing keys', async () => {
    const body = await scrape();
    expect(sample(body, 'auth_server_database_up')).toBe(1);
    for (const alg of ['ES256', 'RS256']) {
      const age = sample(body, `auth_server_signing_key_age_seconds{alg="${alg}"}`);
      expect(body).toContain(`auth_server_signing_key_age_seconds{alg="${alg}"}`);
      // The keys were made for this test file a moment ago, and activate at once.
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(600);
    }
  });

  it('counts a login lockout by limit', async () => {
    const locking = await startTestApp({
      env: { LOGIN_MAX_FAILURES_PER_USERNAME: '1', LOGIN_MAX_FAILURES_PER_IP: '1000' },
    });
    try {
      const refusals = async () =>
        sample(
          (await locking.app.inject({ method: 'GET', url: '/metrics' })).body,
          'auth_server_rate_limit_refusals_total{limit="login_username"}',
        );
      const before = await refusals();
      for (const expected of [401, 429]) {
        const { browser, page } = await openLoginPage(locking.app);
        expect((await submitLogin(browser, page, 'alice', 'not her password')).statusCode).toBe(expected);
      }
      expect((await refusals()) - before).toBe(1);
    } finally {
      await locking.close();
    }
  });

  it('reports the database down (0) once it stops answering', async () => {
    const started = await startTestApp();
    try {
      await started.database.drop();
      const response = await started.app.inject({ method: 'GET', url: '/metrics' });
      expect(response.statusCode).toBe(200);
      expect(sample(response.body, 'auth_server_database_up')).toBe(0);
    } finally {
      await started.app.close();
    }
  });
});
