import { systemClock, systemRandom } from '@oidc-orders/oauth-core';
import { type SmtpFixture, startSmtpServer, urlsIn } from '@oidc-orders/service-kit/testing';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPasskeyRepository } from '../src/mfa/passkey-repository.js';
import { createRecoveryCodeRepository } from '../src/mfa/recovery-codes.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER, TEST_KEY_ENCRYPTION_KEY } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { testSeed } from './helpers/seed.js';
import { createPasskeyResponse } from './helpers/software-authenticator.js';

/**
 * Security notices by mail (README "Email"), read from a real SMTP server: a password changed on
 * the account page and a recovery code used at sign-in are told to the user's address, with when
 * and from which browser and address, and what to do if it was not them; so are an authenticator
 * app added or removed and a passkey removed on the account page, without the app's secret or code.
 */

const FRAN = {
  sub: 'u-fran',
  username: 'fran',
  password: 'fran-password-for-tests',
  email: 'fran@example.test',
};
const GIL = { sub: 'u-gil', username: 'gil', password: 'gil-password-for-tests', email: 'gil@example.test' };
const IDA = { sub: 'u-ida', username: 'ida', password: 'ida-password-for-tests', email: 'ida@example.test' };
const HAL = { sub: 'u-hal', username: 'hal', password: 'hal-password-for-tests', email: 'hal@example.test' };
const TEST_ISSUER_ORIGIN = new URL(TEST_ISSUER).origin;
const FACTOR_ADDED = 'A sign-in method was added to your account at issuer.example.test';
const FACTOR_REMOVED = 'A sign-in method was removed from your account at issuer.example.test';
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

let smtp: SmtpFixture;
let app: FastifyInstance;
let close: () => Promise<void>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  const seed = testSeed();
  seed.users = [
    ...(seed.users ?? []),
    { ...FRAN, totp_secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' },
    GIL,
    HAL,
    IDA,
  ];
  ({ app, close } = await startTestApp({ seed, env: { SMTP_URL: smtp.url } }));
});
afterAll(async () => {
  await close?.();
  await smtp?.close();
});

const settled = () => app.securityNotices!.settled();

/** Signs in on the account page (a user without a factor yet) from a known browser and address. */
async function signedInAccount(who: { username: string; password: string }, remoteAddress: string) {
  const browser = new TestBrowser(app, { userAgent: USER_AGENT, remoteAddress });
  const login = await browser.follow(await browser.get('/account'));
  const back = await browser.post(browser.lastUrl, { ...hiddenFields(login.body), ...who });
  expect(locationOf(back).pathname).toBe('/account');
  return { browser, page: await browser.get('/account') };
}

/** What a notice must tell (what, when, from where, what to do), as plain text and HTML. */
function expectNoticeOf(mail: { text?: string; html?: string | false }, what: RegExp, ip: string) {
  for (const part of [mail.text ?? '', mail.html || '']) {
    expect(part).toMatch(what);
    // When: the day and time in UTC, written as the recipient's language writes dates (Intl).
    expect(part).toContain(
      new Intl.DateTimeFormat('en', { dateStyle: 'long', timeZone: 'UTC' }).format(new Date()),
    );
    expect(part).toMatch(/\d{1,2}:\d{2}:\d{2}\s[AP]M UTC/);
    expect(part).toMatch(/Chrome/);
    expect(part).toContain(ip);
    expect(part).toContain('If this was not you');
  }
}

describe('security notices', () => {
  it('tells the user that the password was changed on the account page, from which browser and address', async () => {
    const browser = new TestBrowser(app, { userAgent: USER_AGENT, remoteAddress: '192.0.2.77' });
    const start = await browser.get('/account');
    const login = await browser.get(start.headers.location as string);
    await browser.post(browser.lastUrl, {
      ...hiddenFields(login.body),
      username: 'alice',
      password: 'alice-password-for-tests',
    });
    const csrf = hiddenFields((await browser.get('/account')).body).csrf!;
    const changed = await browser.post('/account/password', {
      csrf,
      current_password: 'alice-password-for-tests',
      new_password: 'alice-changed-password-1',
      confirm_password: 'alice-changed-password-1',
    });
    // Post/redirect/get: the result is at the GET address the 303 names.
    expect(changed.statusCode).toBe(303);
    expect(locationOf(changed).pathname).toBe('/account');
    expect((await browser.get(changed.headers.location as string)).body).toContain('Password changed.');
    await settled();
    const notice = await smtp.nextMailTo('alice@example.test', {
      subject: 'Your password for issuer.example.test was changed',
    });
    expect(notice.parsed.text).toMatch(/Chrome/);
    expect(notice.parsed.text).toContain('192.0.2.77');
    expect(notice.parsed.text).toContain('If this was not you');
    expect(urlsIn(notice.parsed.text)).toEqual([]);
  });

  it('tells the user that a recovery code was used to sign in', async () => {
    const codes = await createRecoveryCodeRepository({
      db: app.database.db,
      keyEncryptionKey: new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url')),
      clock: systemClock,
      random: systemRandom,
    }).regenerate(FRAN.sub);
    const { browser, page } = await openLoginPage(app);
    const otpPage = await browser.follow(await submitLogin(browser, page, FRAN.username, FRAN.password));
    const link = /<a href="([^"]+)" data-link="recovery-code"/.exec(otpPage.body)?.[1];
    const recoveryPage = await browser.get(link!);
    const used = await browser.post(browser.lastUrl, {
      ...hiddenFields(recoveryPage.body),
      recovery_code: codes[0]!,
    });
    // Accepted: the page says so and how many codes are left before going on.
    expect(used.statusCode).toBe(200);
    expect(used.body).toContain('data-remaining="9"');
    await settled();
    const notice = await smtp.nextMailTo(FRAN.email, {
      subject: 'A recovery code of your account was used at issuer.example.test',
    });
    expect(notice.parsed.text).toContain('If this was not you');
  });

  it('tells the user that an authenticator app was added, and then removed, without its secret or code', async () => {
    const { browser, page } = await signedInAccount(GIL, '192.0.2.81');
    const enrol = await browser.post('/account/totp', { csrf: hiddenFields(page.body).csrf! });
    expect(enrol.statusCode).toBe(200);
    const secret = /data-totp-secret="([A-Z2-7]+)"/.exec(enrol.body)![1]!;
    const code = TOTP.generate({ secret: Secret.fromBase32(secret) });
    const confirmed = await browser.post('/account/totp/confirm', { ...hiddenFields(enrol.body), otp: code });
    // The first factor: its recovery codes are shown once.
    expect(confirmed.statusCode).toBe(200);
    const recoveryCodes = [...confirmed.body.matchAll(/data-recovery-code="([^"]+)"/g)].map((m) => m[1]!);
    expect(recoveryCodes).toHaveLength(10);
    await settled();
    const added = await smtp.nextMailTo(GIL.email, { subject: FACTOR_ADDED });
    expectNoticeOf(added.parsed, /authenticator app was added/, '192.0.2.81');
    const raw = `${added.parsed.text}${added.parsed.html}`;
    for (const secretPart of [secret, code, ...recoveryCodes]) expect(raw).not.toContain(secretPart);
    expect(urlsIn(added.parsed.text ?? '')).toEqual([]);

    const account = await browser.get('/account');
    const id = /data-factor="([^"]+)"/.exec(account.body)![1]!;
    const removed = await browser.post(`/account/totp/${id}/remove`, {
      csrf: hiddenFields(account.body).csrf!,
    });
    expect(removed.statusCode).toBe(303);
    expect((await browser.follow(removed)).body).toContain('Authenticator app removed.');
    await settled();
    const notice = await smtp.nextMailTo(GIL.email, { subject: FACTOR_REMOVED });
    expectNoticeOf(notice.parsed, /authenticator app was removed/, '192.0.2.81');
    expect(`${notice.parsed.text}${notice.parsed.html}`).not.toContain(secret);
    // One notice per change: nothing else went to this address.
    expect(smtp.received.filter((mail) => mail.to.includes(GIL.email))).toHaveLength(2);
  });

  it('tells the user that a passkey was removed', async () => {
    const { browser } = await signedInAccount(HAL, '192.0.2.82');
    const passkeys = createPasskeyRepository({
      db: app.database.db,
      clock: systemClock,
      random: systemRandom,
    });
    // A stored credential (its key is never checked when removing): the registration ceremony
    // itself needs an authenticator's signatures, which the Chromium passkey test provides.
    await passkeys.add({
      id: 'hal-key-1',
      sub: HAL.sub,
      userHandle: Buffer.from('handle-of-hal').toString('base64url'),
      name: 'Laptop',
      publicKey: Buffer.from('not-a-real-cose-key').toString('base64url'),
      counter: 0,
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
    });
    // As if he had just used it: with a factor enrolled, the account page needs it.
    const used = JSON.stringify([
      { method: 'passkey', at: Math.floor(Date.now() / 1000), userVerified: true },
    ]);
    await app.database.db.execute(
      sql`update sso_sessions set methods = methods || ${used}::jsonb where sub = ${HAL.sub}`,
    );
    const page = await browser.get('/account');
    expect(page.body).toContain('data-passkey="hal-key-1"');
    const removed = await browser.post('/account/passkeys/hal-key-1/remove', {
      csrf: hiddenFields(page.body).csrf!,
    });
    expect(removed.statusCode).toBe(303);
    expect((await browser.follow(removed)).body).toContain('Passkey removed.');
    await settled();
    const notice = await smtp.nextMailTo(HAL.email, { subject: FACTOR_REMOVED });
    expectNoticeOf(notice.parsed, /passkey or authenticator app was removed/, '192.0.2.82');
    expect(smtp.received.filter((mail) => mail.to.includes(HAL.email))).toHaveLength(1);
  });

  it('tells the user that a passkey was added', async () => {
    const { browser, page } = await signedInAccount(IDA, '192.0.2.83');
    const enrol = await browser.post('/account/passkeys', { csrf: hiddenFields(page.body).csrf! });
    expect(enrol.statusCode).toBe(200);
    const options = JSON.parse(
      /data-passkey-options="([^"]*)"/
        .exec(enrol.body)![1]!
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&'),
    );
    const credential = createPasskeyResponse(options, TEST_ISSUER_ORIGIN);
    const added = await browser.post('/account/passkeys/confirm', {
      ...hiddenFields(enrol.body),
      credential: JSON.stringify(credential),
    });
    // The first factor: its recovery codes are shown once.
    expect(added.statusCode).toBe(200);
    expect([...added.body.matchAll(/data-recovery-code=/g)]).toHaveLength(10);
    await settled();
    const notice = await smtp.nextMailTo(IDA.email, { subject: FACTOR_ADDED });
    expectNoticeOf(notice.parsed, /passkey or authenticator app was added/, '192.0.2.83');
    expect(`${notice.parsed.text}${notice.parsed.html}`).not.toContain(credential.id);
    expect(smtp.received.filter((mail) => mail.to.includes(IDA.email))).toHaveLength(1);
  });
});
