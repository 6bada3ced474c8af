import { hashPassword } from '@oidc-orders/oauth-core';
import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { type SmtpFixture, startSmtpServer, urlsIn } from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailTokens, users } from '../src/db/schema.js';
import { hiddenFields, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER } from './helpers/app.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { captureLogs, openLoginPage, submitLogin } from './helpers/security.js';
import { testSeed } from './helpers/seed.js';

/**
 * Self-service password reset by mail (CONTRACT "Email and self-service recovery", README "Email"),
 * the mail read from a real SMTP server on a loopback port: no account enumeration, a single-use
 * link bound to the password it replaces and valid 30 minutes, every session and token ended after
 * the change, a notice mailed, the second factor still asked, and no link or token in any log line.
 */

const clock = createTestClock(1_800_000_000);
const DANA = {
  sub: 'u-dana',
  username: 'dana',
  password: 'dana-password-for-tests',
  email: 'dana@example.test',
};
const ERIN_TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const ERIN = {
  sub: 'u-erin',
  username: 'erin',
  password: 'erin-password-for-tests',
  email: 'erin@example.test',
};

let smtp: SmtpFixture;
let app: FastifyInstance;
let close: () => Promise<void>;
let started: Awaited<ReturnType<typeof startTestApp>>;
let seed: ReturnType<typeof testSeed>;
const logs = captureLogs('debug');

beforeAll(async () => {
  smtp = await startSmtpServer();
  seed = testSeed();
  seed.users = [
    ...(seed.users ?? []),
    { sub: DANA.sub, username: DANA.username, password: DANA.password, email: DANA.email },
    {
      sub: ERIN.sub,
      username: ERIN.username,
      password: ERIN.password,
      email: ERIN.email,
      totp_secret: ERIN_TOTP,
    },
  ];
  started = await startTestApp({
    seed,
    clock,
    env: { SMTP_URL: smtp.url, LOG_LEVEL: 'debug' },
    logger: logs.logger,
    mail: { rateLimits: { perRecipient: 100, perClientAddress: 1000 } },
  });
  app = started.app;
  close = started.close;
});
afterAll(async () => {
  await close?.();
  await smtp?.close();
});

/** From the login page's link: the forgot-password form, submitted with `email`. */
async function askForLink(email: string, browser = new TestBrowser(app)): Promise<LightMyRequestResponse> {
  const { page } = await openLoginPage(app);
  const href = /<a href="([^"]+)" data-action="forgot-password">/.exec(page.body)?.[1];
  expect(href).toBe('/forgot-password');
  const form = await browser.get(href!);
  expect(form.statusCode).toBe(200);
  return browser.post('/forgot-password', { ...hiddenFields(form.body), email });
}

/** The one URL of the next reset mail to `to`: under the issuer's origin. */
async function linkMailedTo(to: string): Promise<string> {
  await app.passwordRecovery!.settled();
  const mail = await smtp.nextMailTo(to, { subject: 'Reset your password for issuer.example.test' });
  const urls = urlsIn(mail.parsed.text);
  expect(urls).toHaveLength(1);
  expect(new URL(urls[0]!).origin).toBe(TEST_ISSUER);
  return urls[0]!;
}

async function resetWith(link: string, newPassword: string, browser = new TestBrowser(app)) {
  const page = await browser.get(link);
  if (page.statusCode !== 200) return page;
  return browser.post(link, {
    ...hiddenFields(page.body),
    new_password: newPassword,
    confirm_password: newPassword,
  });
}

async function signInStatus(username: string, password: string) {
  const { browser, page } = await openLoginPage(app);
  const response = await submitLogin(browser, page, username, password);
  return { browser, response, next: await browser.follow(response) };
}

const mailsTo = (to: string) => smtp.received.filter((mail) => mail.to.includes(to)).length;

describe('asking for a link', () => {
  it('answers the same page and status for a known and an unknown address, and mails only the known one', async () => {
    const known = await askForLink(DANA.email);
    const unknown = await askForLink('nobody@example.test');
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.body).toBe(unknown.body);
    await linkMailedTo(DANA.email);
    expect(mailsTo('nobody@example.test')).toBe(0);
  });

  it('sends at most one mail per request, and a new request voids the previous link', async () => {
    const before = mailsTo(DANA.email);
    await askForLink(DANA.email);
    const first = await linkMailedTo(DANA.email);
    await askForLink(DANA.email.toUpperCase());
    const second = await linkMailedTo(DANA.email);
    expect(mailsTo(DANA.email)).toBe(before + 2);
    expect((await new TestBrowser(app).get(first)).statusCode).toBe(400);
    expect((await new TestBrowser(app).get(second)).statusCode).toBe(200);
  });

  it('refuses a forged form (no CSRF token bound to the browser)', async () => {
    const response = await new TestBrowser(app).post('/forgot-password', { email: DANA.email });
    expect(response.statusCode).toBe(400);
  });
});

describe('the mailed link', () => {
  it('opens the form as often as asked without using it up, works once, and ends every session and token', async () => {
    const tokens = await webClientTokens(app, 'openid email offline_access');
    const signedIn = await signInStatus('alice', 'alice-password-for-tests');
    expect((await signedIn.browser.get('/account')).statusCode).toBe(200);
    await askForLink('alice@example.test');
    const link = await linkMailedTo('alice@example.test');
    // A mail scanner opening the link changes nothing.
    for (let n = 0; n < 3; n++)
      expect((await new TestBrowser(app).get(link)).body).toContain('name="new_password"');
    const changed = await resetWith(link, 'a-fresh-password-for-alice');
    expect(changed.statusCode).toBe(200);
    expect(changed.body).toContain('Your password was changed');
    // The end of the flow has a way on: the account page (it asks for the new password first).
    expect(changed.body).toContain(
      '<a class="button" href="/account" data-action="account">Sign in to your account</a>',
    );
    // Used once: the same link is refused, opened or submitted, and the page still leads on.
    const usedUp = await new TestBrowser(app).get(link);
    expect(usedUp.statusCode).toBe(400);
    expect(usedUp.body).toContain('href="/forgot-password"');
    expect(usedUp.body).toContain(
      '<a class="button" href="/account" data-action="account">Go to your account</a>',
    );
    expect((await resetWith(link, 'another-password-for-alice')).statusCode).toBe(400);
    expect((await refreshWithWebClient(app as never, String(tokens.refresh_token))).statusCode).toBe(400);
    expect((await signedIn.browser.get('/account')).statusCode).not.toBe(200);
    expect((await signInStatus('alice', 'alice-password-for-tests')).response.statusCode).toBe(401);
    expect((await signInStatus('alice', 'a-fresh-password-for-alice')).response.statusCode).toBe(303);
    await app.passwordRecovery!.settled();
    const notice = await smtp.nextMailTo('alice@example.test', {
      subject: 'Your password for issuer.example.test was changed',
    });
    expect(notice.parsed.text).toContain('If this was not you');
    expect(urlsIn(notice.parsed.text)).toEqual([]);
  });

  it('applies the account page password rules, and the link stays usable after a refused password', async () => {
    await askForLink(DANA.email);
    const link = await linkMailedTo(DANA.email);
    const short = await resetWith(link, 'short');
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('name="new_password"');
    const browser = new TestBrowser(app);
    const page = await browser.get(link);
    const differ = await browser.post(link, {
      ...hiddenFields(page.body),
      new_password: 'dana-new-password-1',
      confirm_password: 'x',
    });
    expect(differ.statusCode).toBe(400);
    expect((await resetWith(link, 'dana-new-password-1')).statusCode).toBe(200);
    DANA.password = 'dana-new-password-1';
  });

  it('marks the address verified (the link proved it), also after the seed is applied again', async () => {
    const verified = async () =>
      (await app.database.db.select().from(users).where(eq(users.sub, DANA.sub)))[0]?.emailVerified;
    expect(await verified()).toBe(true);
    const restarted = await startTestApp({ seed, database: started.database });
    await restarted.close();
    expect(await verified()).toBe(true);
  });

  it('refuses a tampered token', async () => {
    await askForLink(DANA.email);
    const link = new URL(await linkMailedTo(DANA.email));
    const token = link.searchParams.get('token')!;
    link.searchParams.set('token', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`);
    expect((await resetWith(link.toString(), 'tampered-password-123')).statusCode).toBe(400);
    link.searchParams.set('token', token);
    expect((await new TestBrowser(app).get(link.toString())).statusCode).toBe(200);
  });

  it('expires after 30 minutes', async () => {
    await askForLink(DANA.email);
    const link = await linkMailedTo(DANA.email);
    clock.advance(30 * 60 - 1);
    expect((await new TestBrowser(app).get(link)).statusCode).toBe(200);
    clock.advance(1);
    expect((await resetWith(link, 'expired-password-123')).statusCode).toBe(400);
  });

  it('is void once the password changed another way', async () => {
    await askForLink(DANA.email);
    const link = await linkMailedTo(DANA.email);
    await app.database.db
      .update(users)
      .set({ passwordHash: await hashPassword('changed-by-an-operator') })
      .where(eq(users.sub, DANA.sub));
    expect((await resetWith(link, 'too-late-password-123')).statusCode).toBe(400);
    expect((await signInStatus('dana', 'too-late-password-123')).response.statusCode).toBe(401);
  });

  it('stores only a hash of the token', async () => {
    await askForLink(DANA.email);
    const token = new URL(await linkMailedTo(DANA.email)).searchParams.get('token')!;
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const rows = await app.database.db.select().from(mailTokens);
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});

describe('a second factor is never bypassed', () => {
  it('asks the authenticator app code at the next sign-in after a reset', async () => {
    await askForLink(ERIN.email);
    expect((await resetWith(await linkMailedTo(ERIN.email), 'erin-new-password-1')).statusCode).toBe(200);
    const { next } = await signInStatus('erin', 'erin-new-password-1');
    expect(next.body).toContain('name="otp"');
  });
});

describe('logs', () => {
  it('never carry a link or token', async () => {
    await askForLink(DANA.email);
    const token = new URL(await linkMailedTo(DANA.email)).searchParams.get('token')!;
    await resetWith(`${TEST_ISSUER}/reset-password?token=${token}`, 'short');
    expect(logs.text()).toContain('mail sent');
    expect(logs.text()).not.toContain(token);
  });
});

describe('no enumeration by timing', () => {
  it('answers a known and an unknown address in the same time (medians of 50 tries each)', async () => {
    const browser = new TestBrowser(app);
    const csrf = hiddenFields((await browser.get('/forgot-password')).body).csrf!;
    const timings: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
    for (let n = 0; n < 100; n++) {
      const kind = n % 2 === 0 ? 'known' : 'unknown';
      const email = kind === 'known' ? DANA.email : 'nobody@example.test';
      const started = process.hrtime.bigint();
      const response = await browser.post('/forgot-password', { csrf, email });
      timings[kind].push(Number(process.hrtime.bigint() - started) / 1e6);
      expect(response.statusCode).toBe(200);
      // Each request's background work finishes before the next is timed, the SMTP server's too
      // (it runs in this process, as the app does: a fixture artefact, not part of the answer).
      await app.passwordRecovery!.settled();
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const known = median(timings.known);
    const unknown = median(timings.unknown);
    // Doing the lookup, token and mail before answering made known addresses ~20 ms slower here.
    expect(Math.abs(known - unknown)).toBeLessThan(Math.max(3, 0.3 * Math.min(known, unknown)));
  });
});
