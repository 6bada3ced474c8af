import { systemClock, systemRandom } from '@oidc-orders/oauth-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecoveryCodeRepository } from '../src/mfa/recovery-codes.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_KEY_ENCRYPTION_KEY } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { testSeed } from './helpers/seed.js';
import { type SmtpFixture, startSmtpServer, urlsIn } from './helpers/smtp-server.js';

/**
 * Security notices by mail (README "Email"), read from a real SMTP server: a password changed on
 * the account page and a recovery code used at sign-in are told to the user's address, with when
 * and from which browser and address, and what to do if it was not them.
 */

const FRAN = {
  sub: 'u-fran',
  username: 'fran',
  password: 'fran-password-for-tests',
  email: 'fran@example.test',
};
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

let smtp: SmtpFixture;
let app: FastifyInstance;
let close: () => Promise<void>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  const seed = testSeed();
  seed.users = [...(seed.users ?? []), { ...FRAN, totp_secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' }];
  ({ app, close } = await startTestApp({ seed, env: { SMTP_URL: smtp.url } }));
});
afterAll(async () => {
  await close?.();
  await smtp?.close();
});

const settled = () => app.securityNotices!.settled();

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
});
