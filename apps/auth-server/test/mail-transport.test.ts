import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  closedPort,
  makeThrowAwayCa,
  type SmtpFixture,
  startSmtpServer,
  startStallingServer,
  type ThrowAwayCa,
} from '@oidc-orders/service-kit/testing';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, type OutgoingMail, type SmtpTimings } from '../src/mail/mailer.js';
import { mailsSent } from '../src/metrics.js';
import { testConfig } from './helpers/app.js';

/**
 * Sending mail over real SMTP (README "Email"): a real server on a loopback port receives it,
 * plain or upgraded with STARTTLS and checked against a private CA given through SMTP_CA_FILE;
 * a server that is down or stalls makes a send fail within its deadline, never hang.
 */

/** A log sink: these tests read outcomes and the counter, not log lines. */
const log = {
  info() {},
  warn() {},
  child: () => log,
} as unknown as FastifyBaseLogger;
const FAST: SmtpTimings = {
  connectionTimeoutMs: 500,
  greetingTimeoutMs: 500,
  socketTimeoutMs: 800,
  sendDeadlineMs: 1_500,
  attempts: 2,
  retryBackoffMs: 50,
};

const mail = (to: string): OutgoingMail => ({
  purpose: 'password_reset',
  to,
  subject: 'Reset your password for issuer.example.test',
  text: 'Choose a new password:\nhttps://issuer.example.test/reset-password?token=t\n',
  html: '<p>Choose a new password</p>',
});

async function mailerFor(env: Record<string, string>) {
  const config = testConfig({ MAIL_FROM: 'no-reply@issuer.example.test', ...env });
  const mailer = await createMailer(config.mail, log, FAST);
  if (!mailer) throw new Error('mail is off');
  return mailer;
}

const failedCount = async () =>
  (await mailsSent.get()).values.find(
    (v) => v.labels.outcome === 'failed' && v.labels.purpose === 'password_reset',
  )?.value ?? 0;

let ca: ThrowAwayCa;
let plain: SmtpFixture;
let starttls: SmtpFixture;
beforeAll(async () => {
  ca = makeThrowAwayCa();
  plain = await startSmtpServer();
  starttls = await startSmtpServer({ tls: { key: ca.key, cert: ca.cert } });
});
afterAll(async () => {
  await plain?.close();
  await starttls?.close();
  ca?.remove();
});

describe('SMTP delivery', () => {
  it('delivers text and HTML parts from MAIL_FROM to a plain SMTP server', async () => {
    const mailer = await mailerFor({ SMTP_URL: plain.url });
    await expect(mailer.send(mail('alice@example.test'))).resolves.toEqual({ sent: true });
    const received = await plain.nextMailTo('alice@example.test');
    expect(received.parsed.from?.value[0]?.address).toBe('no-reply@issuer.example.test');
    expect(received.parsed.text).toContain('/reset-password?token=t');
    expect(received.parsed.html).toContain('<p>Choose a new password</p>');
    await mailer.close();
  });

  it('upgrades with STARTTLS when offered and checks the certificate against SMTP_CA_FILE', async () => {
    const mailer = await mailerFor({ SMTP_URL: starttls.url, SMTP_CA_FILE: ca.caFile });
    await expect(mailer.send(mail('tls@example.test'))).resolves.toEqual({ sent: true });
    expect((await starttls.nextMailTo('tls@example.test')).secure).toBe(true);
    await mailer.close();
  });

  it('refuses a server whose certificate no trusted CA signed (the check is never turned off)', async () => {
    const mailer = await mailerFor({ SMTP_URL: starttls.url });
    const outcome = await mailer.send(mail('untrusted@example.test'));
    expect(outcome.sent).toBe(false);
    expect(starttls.received.some((received) => received.to.includes('untrusted@example.test'))).toBe(false);
    await mailer.close();
  });

  it('gives up on a server that is down, counting the failure', async () => {
    const before = await failedCount();
    const mailer = await mailerFor({ SMTP_URL: `smtp://localhost:${await closedPort()}` });
    const outcome = await mailer.send(mail('down@example.test'));
    expect(outcome).toEqual({ sent: false, reason: expect.stringMatching(/ECONNECTION|ESOCKET/) });
    expect(await failedCount()).toBe(before + 1);
    await mailer.close();
  });

  it('gives up on a server that stalls within the send deadline', async () => {
    const stalling = await startStallingServer();
    const mailer = await mailerFor({ SMTP_URL: `smtp://localhost:${stalling.port}` });
    const started = Date.now();
    const outcome = await mailer.send(mail('stall@example.test'));
    expect(outcome.sent).toBe(false);
    expect(Date.now() - started).toBeLessThan(FAST.sendDeadlineMs + 500);
    await mailer.close();
    await stalling.close();
  });
});

describe('mail configuration', () => {
  it('needs no mail server when SMTP_URL is unset: the dev mailbox outside production, nothing in production', () => {
    expect(testConfig({ NODE_ENV: 'development' }).mail).toMatchObject({ transport: 'dev-mailbox' });
    expect(testConfig({ NODE_ENV: 'production' }).mail).toBeNull();
    expect(testConfig({ MAIL_DEV_DIR: '/tmp/mailbox' }).mail).toMatchObject({ directory: '/tmp/mailbox' });
  });

  it('defaults MAIL_FROM to no-reply@ the issuer host, and reads SMTP_URL from SMTP_URL_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'smtp-url-'));
    writeFileSync(join(dir, 'smtp-url'), 'smtp://user:secret@localhost:2525\n');
    expect(testConfig({ SMTP_URL_FILE: join(dir, 'smtp-url') }).mail).toEqual({
      transport: 'smtp',
      url: 'smtp://user:secret@localhost:2525',
      caFile: undefined,
      from: 'no-reply@issuer.example.test',
    });
    rmSync(dir, { recursive: true });
  });

  it('refuses an SMTP_URL that is not smtp:// or smtps:// without echoing it', () => {
    expect(() => testConfig({ SMTP_URL: 'http://user:secret@relay' })).toThrow(/^SMTP_URL is invalid/);
    expect(() => testConfig({ SMTP_URL: 'http://user:secret@relay' })).not.toThrow(/secret/);
  });
});
