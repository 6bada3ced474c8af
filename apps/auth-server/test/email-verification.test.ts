import {
  type SmtpFixture,
  startSmtpServer,
  startStallingServer,
  urlsIn,
} from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../src/db/schema.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { testSeed } from './helpers/seed.js';
import { STALL_TEST_SMTP_TIMINGS } from './helpers/smtp-timings.js';

/**
 * Verified addresses (README "Email"): the account page says whether the address is verified and
 * mails a link on request; the link's page changes nothing until its button is pressed; a mail that
 * cannot be sent is said in words on the page within the send deadline.
 */

/** The way on from a page that ends a mailed link's flow (src/pages/account-way-on.ts). */
const ACCOUNT_WAY_ON = '<a class="button" href="/account" data-action="account">Go to your account</a>';

const GUS = { sub: 'u-gus', username: 'gus', password: 'gus-password-for-tests', email: 'gus@example.test' };

function seedWithGus() {
  const seed = testSeed();
  seed.users = [...(seed.users ?? []), GUS];
  return seed;
}

async function signedInToAccount(app: FastifyInstance, person = GUS): Promise<TestBrowser> {
  const browser = new TestBrowser(app);
  const start = await browser.get('/account');
  const login = await browser.get(start.headers.location as string);
  await browser.post(browser.lastUrl, {
    ...hiddenFields(login.body),
    username: person.username,
    password: person.password,
  });
  return browser;
}

async function askForVerification(browser: TestBrowser) {
  const csrf = hiddenFields((await browser.get('/account')).body).csrf!;
  return browser.post('/account/email/verify', { csrf });
}

/** Post/redirect/get: an account form answers 303 to a GET address of /account; returns that page. */
async function resultOf(browser: TestBrowser, response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(303);
  expect(locationOf(response).pathname).toBe('/account');
  const page = await browser.get(response.headers.location as string);
  expect(page.statusCode).toBe(200);
  return page;
}

describe('verifying the address', () => {
  let smtp: SmtpFixture;
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let database: Awaited<ReturnType<typeof startTestApp>>['database'];
  beforeAll(async () => {
    smtp = await startSmtpServer();
    ({ app, close, database } = await startTestApp({ seed: seedWithGus(), env: { SMTP_URL: smtp.url } }));
  });
  afterAll(async () => {
    await close?.();
    await smtp?.close();
  });

  it('shows an unverified address, mails a link on request, and verifies it by the button only', async () => {
    const browser = await signedInToAccount(app);
    expect((await browser.get('/account')).body).toContain('data-email-verified="false"');
    const asked = await resultOf(browser, await askForVerification(browser));
    expect(asked.body).toContain('We sent a link to your address.');
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
    // The end of the flow has a way on: the account page.
    expect(confirmed.body).toContain(ACCOUNT_WAY_ON);
    expect((await browser.get('/account')).body).toContain('data-email-verified="true"');
    const reused = await visitor.post(urls[0]!, hiddenFields(page.body));
    expect(reused.statusCode).toBe(400);
    expect(reused.body).toContain(ACCOUNT_WAY_ON);
  });

  it('changes the address only once the new one confirms it; the old one can undo it and sign out everywhere', async () => {
    const browser = await signedInToAccount(app);
    const before = (await browser.get('/account')).body;
    // What the form says happens: the address stays until the button of the mailed link, and apps
    // keyed on the address (the orders app's history) then show what belongs to the new one.
    expect(before).toContain(
      'Your account keeps this address until you open the link we mail to the new one and choose “Use this address”; this address gets a link to undo the change.',
    );
    expect(before).toContain(
      'an order history, for example, no longer shows the orders placed under this address',
    );
    const csrf = hiddenFields(before).csrf!;
    const asked = await resultOf(
      browser,
      await browser.post('/account/email', { csrf, email: 'gus-new@example.test' }),
    );
    expect(asked.body).toContain(
      'We sent a link to the new address. Your account keeps its current address until you open that link and choose “Use this address”.',
    );
    const confirmation = await smtp.nextMailTo('gus-new@example.test', {
      subject: 'Confirm your new address for issuer.example.test',
    });
    const notice = await smtp.nextMailTo(GUS.email, {
      subject: 'The address of your account at issuer.example.test is being changed',
    });
    expect(notice.parsed.text).toContain('gus-new@example.test');
    // The old address stays until the new one is confirmed.
    expect((await browser.get('/account')).body).toContain(GUS.email);

    const [confirmLink] = urlsIn(confirmation.parsed.text);
    const visitor = new TestBrowser(app);
    const confirmPage = await visitor.get(confirmLink!);
    // Opening the link changed nothing; its button does.
    expect((await browser.get('/account')).body).not.toContain('gus-new@example.test');
    const confirmed = await visitor.post(confirmLink!, hiddenFields(confirmPage.body));
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.body).toContain(ACCOUNT_WAY_ON);
    const account = (await browser.get('/account')).body;
    expect(account).toContain('gus-new@example.test');
    expect(account).toContain('data-email-verified="true"');
    // Changed here, so owned here: no upstream sign-in puts the old address back.
    const [row] = await database.handle.db.select().from(users).where(eq(users.sub, GUS.sub));
    expect(row?.claimSources).toEqual({ email: 'local' });
    // Applying the same seed file again (a restart) keeps the changed address.
    const restarted = await startTestApp({ seed: seedWithGus(), env: { SMTP_URL: smtp.url }, database });
    await restarted.close();
    expect((await browser.get('/account')).body).toContain('gus-new@example.test');

    const [undoLink] = urlsIn(notice.parsed.text);
    const undoPage = await visitor.get(undoLink!);
    const undone = await visitor.post(undoLink!, hiddenFields(undoPage.body));
    expect(undone.statusCode).toBe(200);
    expect(undone.body).toContain(ACCOUNT_WAY_ON);
    expect((await browser.get('/account')).statusCode).not.toBe(200);
    const again = await signedInToAccount(app);
    expect((await again.get('/account')).body).toContain(GUS.email);
  });

  it('refuses something that is not an address', async () => {
    const browser = await signedInToAccount(app);
    const csrf = hiddenFields((await browser.get('/account')).body).csrf!;
    const refused = await browser.post('/account/email', { csrf, email: 'not an address' });
    const page = await resultOf(browser, refused);
    // The error is shown inside the address form, on its field, with what was typed kept.
    const form = /<form method="post" action="\/account\/email" [\s\S]*?<\/form>/.exec(page.body)![0];
    expect(form).toContain('id="error-email">That is not an e-mail address.</p>');
    expect(form).toMatch(/id="new_email"[^>]*value="not an address"[^>]*aria-invalid="true"[^>]*autofocus/);
    // Nothing was changed or sent.
    expect(page.body).toContain(GUS.email);
  });
});

describe('an SMTP server that stalls', () => {
  it('answers the account page within the send deadline, saying the message could not be sent', async () => {
    const stalling = await startStallingServer();
    const started = await startTestApp({
      seed: seedWithGus(),
      env: { SMTP_URL: `smtp://localhost:${stalling.port}` },
      mail: { smtpTimings: STALL_TEST_SMTP_TIMINGS },
    });
    try {
      const browser = await signedInToAccount(started.app);
      const before = Date.now();
      const asked = await resultOf(browser, await askForVerification(browser));
      // Within the send deadline the person reads the result page (after the redirect).
      expect(Date.now() - before).toBeLessThan(2_000);
      expect(asked.body).toContain('We could not send the message. Please try again in a few minutes.');
    } finally {
      await started.close();
      await stalling.close();
    }
  });
});

describe('changing the address is limited as the forgot-password form is', () => {
  const IDA = {
    sub: 'u-ida',
    username: 'ida',
    password: 'ida-password-for-tests',
    email: 'ida@example.test',
  };
  let smtp: SmtpFixture;
  let database: TestDatabase;
  let first: Awaited<ReturnType<typeof startTestApp>>;
  let second: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    database = await createTestDatabase();
    const seed = seedWithGus();
    seed.users = [...(seed.users ?? []), IDA];
    // Two instances on one database: the counters are rows, shared by both.
    const options = { seed, database, env: { SMTP_URL: smtp.url } };
    first = await startTestApp(options);
    second = await startTestApp(options);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await smtp?.close();
    await database?.drop();
  });

  const askForChange = async (browser: TestBrowser, email: string) => {
    const csrf = hiddenFields((await browser.get('/account')).body).csrf!;
    return browser.post('/account/email', { csrf, email });
  };

  it('per recipient, on the same counter as the reset form: a mailbox that got 3 reset requests gets no confirmation (429)', async () => {
    const victim = 'victim@example.test';
    for (const app of [first.app, second.app, first.app]) {
      const browser = new TestBrowser(app);
      const form = await browser.get('/forgot-password');
      expect(
        (await browser.post('/forgot-password', { ...hiddenFields(form.body), email: victim })).statusCode,
      ).toBe(200);
    }
    const refused = await askForChange(await signedInToAccount(second.app), victim.toUpperCase());
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await first.app.passwordRecovery!.settled();
    expect(smtp.received.some((mail) => mail.to.includes(victim))).toBe(false);
  });

  it('per account, on every instance: the 4th new address within the window is refused (429)', async () => {
    const browsers = [await signedInToAccount(first.app, IDA), await signedInToAccount(second.app, IDA)];
    for (const [index, browser] of [browsers[0], browsers[1], browsers[0]].entries()) {
      expect((await askForChange(browser!, `ida-new-${index}@example.test`)).statusCode).toBe(303);
    }
    const refused = await askForChange(browsers[1]!, 'ida-new-3@example.test');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toEqual(expect.any(String));
    expect(smtp.received.some((mail) => mail.to.includes('ida-new-3@example.test'))).toBe(false);
  });
});
