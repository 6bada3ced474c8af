import { type SmtpFixture, startSmtpServer, startStallingServer } from '@oidc-orders/service-kit/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, TestBrowser } from './browser.js';
import { startTestApp } from './helpers/app.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';
import { captureLogs } from './helpers/security.js';
import { STALL_TEST_SMTP_TIMINGS } from './helpers/smtp-timings.js';

/**
 * The forgot-password form behind a load balancer: two instances on one PostgreSQL database share
 * the mail rate limits (per recipient address and per client address, README "Email"), and a
 * stalled SMTP server never holds the page.
 */

const runs = await postgresForThisFile('password-reset-instances.test.ts');

const ALICE_EMAIL = 'alice@example.test';
const limits = { perRecipient: 3, perClientAddress: 5, windowSeconds: 900 };

async function ask(app: FastifyInstance, email: string, remoteAddress: string) {
  const browser = new TestBrowser(app, { remoteAddress });
  const form = await browser.get('/forgot-password');
  return browser.post('/forgot-password', { ...hiddenFields(form.body), email });
}

describe.runIf(runs)('mail rate limits shared by two instances (PostgreSQL)', () => {
  let database: TestDatabase;
  let smtp: SmtpFixture;
  const instances: Array<Awaited<ReturnType<typeof startTestApp>>> = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    smtp = await startSmtpServer();
    for (let n = 0; n < 2; n++) {
      const own = n === 0 ? database : { ...database, handle: await database.openAnother() };
      instances.push(
        await startTestApp({ database: own, env: { SMTP_URL: smtp.url }, mail: { rateLimits: limits } }),
      );
    }
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await database?.drop();
    await smtp?.close();
  });

  it('counts requests for one address on every instance, then answers 429 with Retry-After', async () => {
    const [a, b] = instances.map((instance) => instance.app);
    expect((await ask(a!, ALICE_EMAIL, '192.0.2.1')).statusCode).toBe(200);
    expect((await ask(b!, ALICE_EMAIL, '192.0.2.2')).statusCode).toBe(200);
    expect((await ask(a!, ALICE_EMAIL.toUpperCase(), '192.0.2.3')).statusCode).toBe(200);
    const refused = await ask(b!, ALICE_EMAIL, '192.0.2.4');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many');
    // An unknown address is limited alike: the limit tells nothing about accounts.
    for (let n = 0; n < 3; n++) await ask(a!, 'nobody@example.test', `198.51.100.${n}`);
    expect((await ask(b!, 'nobody@example.test', '198.51.100.9')).statusCode).toBe(429);
    await Promise.all(instances.map((instance) => instance.app.passwordRecovery!.settled()));
    expect(smtp.received.filter((mail) => mail.to.includes(ALICE_EMAIL))).toHaveLength(3);
  });

  it('counts requests from one client address on every instance', async () => {
    const [a, b] = instances.map((instance) => instance.app);
    for (let n = 0; n < limits.perClientAddress; n++) {
      const app = n % 2 === 0 ? a! : b!;
      expect((await ask(app, `someone-${n}@example.test`, '203.0.113.7')).statusCode).toBe(200);
    }
    expect((await ask(b!, 'someone-else@example.test', '203.0.113.7')).statusCode).toBe(429);
  });
});

describe('a stalled SMTP server', () => {
  it('never holds the page: the answer comes at once, the failure is logged without the link', async () => {
    const stalling = await startStallingServer();
    const logs = captureLogs('info');
    const started = await startTestApp({
      env: { SMTP_URL: `smtp://localhost:${stalling.port}`, LOG_LEVEL: 'info' },
      logger: logs.logger,
      mail: { smtpTimings: STALL_TEST_SMTP_TIMINGS },
    });
    try {
      const before = Date.now();
      const response = await ask(started.app, ALICE_EMAIL, '192.0.2.50');
      expect(response.statusCode).toBe(200);
      expect(Date.now() - before).toBeLessThan(1_000);
      await started.app.passwordRecovery!.settled();
      const failure = logs.lines().find((line) => line.msg === 'mail could not be sent');
      expect(failure).toMatchObject({ purpose: 'password_reset', reason: expect.any(String) });
      expect(logs.text()).not.toMatch(/reset-password\?token=/);
    } finally {
      await started.close();
      await stalling.close();
    }
  });
});
