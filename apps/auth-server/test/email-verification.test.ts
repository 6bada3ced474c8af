import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';
import { type SmtpFixture, startSmtpServer, startStallingServer, urlsIn } from './helpers/smtp-server.js';

/**
 * Verified addresses (README "Email"): the account page says whether the address is verified and
 * mails a link on request; the link's page changes nothing until its button is pressed; a mail that
 * cannot be sent is said in words on the page within the send deadline.
 */

const GUS = { sub: 'u-gus', username: 'gus', password: 'gus-password-for-tests', email: 'gus@example.test' };

function seedWithGus() {
  const seed = testSeed();
  seed.users = [...(seed.users ?? []), GUS];
  return seed;
}

async function signedInToAccount(app: FastifyInstance): Promise<TestBrowser> {
  const browser = new TestBrowser(app);
  const start = await browser.get('/account');
  const login = await browser.get(start.headers.location as string);
  await browser.post(browser.lastUrl, {
    ...hiddenFields(login.body),
    username: GUS.username,
    password: GUS.password,
  });
  return browser;
}

async function askForVerification(browser: TestBrowser) {
  const csrf = hiddenFields((await browser.get('/account')).body).csrf!;
  return browser.post('/account/email/verify', { csrf });
}

describe('verifying the address', () => {
  let smtp: SmtpFixture;
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    ({ app, close } = await startTestApp({ seed: seedWithGus(), env: { SMTP_URL: smtp.url } }));
  });
  afterAll(async () => {
    await close?.();
    await smtp?.close();
  });

  it('shows an unverified address, mails a link on request, and verifies it by the button only', async () => {
    const browser = await signedInToAccount(app);
    expect((await browser.get('/account')).body).toContain('data-email-verified="false"');
    const asked = await askForVerification(browser);
    expect(asked.statusCode).toBe(200);
    const mail = await smtp.nextMailTo(GUS.email, {
      subject: 'Confirm your address for issuer.example.test',
    });
    const urls = urlsIn(mail.parsed.text);
    expect(urls).toHaveLength(1);
    expect(urls[0]!.startsWith(`${TEST_ISSUER}/verify-email?token=`)).toBe(true);

    const visitor = new TestBrowser(app);
    for (let n = 0; n < 2; n++) expect((await visitor.get(urls[0]!)).body).toContain('Confirm my address');
    expect((await browser.get('/account')).body).toContain('data-email-verified="false"');
    const page = await visitor.get(urls[0]!);
    const confirmed = await visitor.post(urls[0]!, hiddenFields(page.body));
    expect(confirmed.statusCode).toBe(200);
    expect((await browser.get('/account')).body).toContain('data-email-verified="true"');
    expect((await visitor.post(urls[0]!, hiddenFields(page.body))).statusCode).toBe(400);
  });
});

describe('an SMTP server that stalls', () => {
  it('answers the account page within the send deadline, saying the message could not be sent', async () => {
    const stalling = await startStallingServer();
    const started = await startTestApp({
      seed: seedWithGus(),
      env: { SMTP_URL: `smtp://localhost:${stalling.port}` },
      mail: {
        smtpTimings: {
          connectionTimeoutMs: 300,
          greetingTimeoutMs: 300,
          socketTimeoutMs: 500,
          sendDeadlineMs: 1_000,
          attempts: 2,
          retryBackoffMs: 50,
        },
      },
    });
    try {
      const browser = await signedInToAccount(started.app);
      const before = Date.now();
      const asked = await askForVerification(browser);
      expect(Date.now() - before).toBeLessThan(2_000);
      expect(asked.statusCode).toBe(503);
      expect(asked.body).toContain('We could not send the message. Please try again in a few minutes.');
    } finally {
      await started.close();
      await stalling.close();
    }
  });
});
