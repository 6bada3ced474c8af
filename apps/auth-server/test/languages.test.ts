import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { type SmtpFixture, startSmtpServer } from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS } from '../src/audit.js';
import { users } from '../src/db/schema.js';
import { translatorFor } from '../src/i18n/translator.js';
import { renderSecurityEventsSection } from '../src/pages/account-security-events.js';
import { renderLinkAccountPage } from '../src/pages/link-account.js';
import { renderEnrolPasskeyPage } from '../src/pages/passkey.js';
import { renderRecoveryCodesShownPage } from '../src/pages/recovery.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { authorizePath, CONSENTING, pkcePair, signInSeed } from './sign-in-fixtures.js';

/**
 * The pages' and mails' language (CONTRACT "Languages"): `ui_locales` (OIDC Core §3.1.2.1) kept
 * through login, second factor and consent, then the switcher's cookie, then Accept-Language;
 * the same field names and `data-*` attributes in every language; mails in the language the
 * user last signed in with, read from a real SMTP server on a loopback port.
 */

const GRETA = {
  sub: 'u-greta',
  username: 'greta',
  password: 'greta-password-for-tests',
  email: 'greta@example.test',
  totp: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
};

const clock = createTestClock(Math.floor(Date.now() / 1000));
const codeNow = () =>
  TOTP.generate({ secret: Secret.fromBase32(GRETA.totp), timestamp: clock.nowSeconds() * 1000 });

let smtp: SmtpFixture;
let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  const seed = signInSeed();
  seed.users = [
    ...(seed.users ?? []),
    {
      sub: GRETA.sub,
      username: GRETA.username,
      password: GRETA.password,
      name: 'Greta',
      email: GRETA.email,
      email_verified: true,
      totp_secret: GRETA.totp,
    },
  ];
  ({ app, database, close } = await startTestApp({
    seed,
    clock,
    env: { SMTP_URL: smtp.url },
    mail: { rateLimits: { perRecipient: 100, perClientAddress: 1000 } },
  }));
});
afterAll(async () => {
  await close?.();
  await smtp?.close();
});

/** An authorization request of the consenting client, landed on its login page. */
async function startSignIn(browser: TestBrowser, extra: Record<string, string> = {}) {
  const { challenge } = pkcePair();
  const response = await browser.get(
    authorizePath({
      client_id: CONSENTING.clientId,
      redirect_uri: CONSENTING.redirectUri,
      response_type: 'code',
      scope: 'openid profile email orders.read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's-1',
      ...extra,
    }),
  );
  return browser.follow(response);
}

const htmlLang = (page: LightMyRequestResponse) => /<html lang="([^"]+)"( dir="rtl")?>/.exec(page.body);

/** What must not change with the language: form field names and data-* attributes (sorted). */
function languageIndependentParts(page: string): string[] {
  const names = [...page.matchAll(/ name="([^"]+)"/g)].map((match) => `name=${match[1]}`);
  const data = [...page.matchAll(/ (data-[a-z-]+)(?:="[^"]*")?/g)]
    .map((match) => match[1] ?? '')
    .filter((attribute) => attribute !== 'data-language');
  return [...names, ...data].sort();
}

async function post(browser: TestBrowser, page: LightMyRequestResponse, fields: Record<string, string>) {
  return browser.post(browser.lastUrl, { ...hiddenFields(page.body), ...fields });
}

describe('discovery', () => {
  it('publishes ui_locales_supported with en, de, fr and ar', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(response.json().ui_locales_supported).toEqual(expect.arrayContaining(['en', 'de', 'fr', 'ar']));
  });
});

describe('ui_locales', () => {
  it('keeps German through login, a wrong password, the second factor and consent, over a French browser', async () => {
    const browser = new TestBrowser(app, { acceptLanguage: 'fr-FR, fr;q=0.9, en;q=0.5' });
    const login = await startSignIn(browser, { ui_locales: 'de-CH en' });
    expect(htmlLang(login)?.[1]).toBe('de');
    expect(login.body).toContain('<label for="password">Passwort</label>');
    // ui_locales decides for this sign-in: a switcher would change nothing, so there is none.
    expect(login.body).not.toContain('class="languages"');

    const wrong = await post(browser, login, { username: GRETA.username, password: 'not-it' });
    expect(wrong.statusCode).toBe(401);
    expect(htmlLang(wrong)?.[1]).toBe('de');
    expect(wrong.body).toContain('Benutzername oder Passwort ist falsch.');

    const afterPassword = await post(browser, wrong, { username: GRETA.username, password: GRETA.password });
    expect(locationOf(afterPassword).pathname).toMatch(/\/otp$/);
    const otp = await browser.follow(afterPassword);
    expect(htmlLang(otp)?.[1]).toBe('de');
    expect(otp.body).toContain('Bestätigung in zwei Schritten');

    const afterOtp = await post(browser, otp, { otp: codeNow() });
    const consent = await browser.follow(afterOtp);
    expect(new URL(browser.lastUrl, 'http://x').pathname).toMatch(/\/consent$/);
    expect(htmlLang(consent)?.[1]).toBe('de');
    expect(consent.body).toContain('Ihre E-Mail-Adresse sehen');
    expect(consent.body).toContain('value="approve"');

    const done = await post(browser, consent, { decision: 'approve' });
    expect(locationOf(done).origin).toBe(new URL(CONSENTING.redirectUri).origin);
    expect(locationOf(done).searchParams.get('code')).toBeTruthy();
  });

  it('makes the pages right to left in Arabic', async () => {
    const login = await startSignIn(new TestBrowser(app), { ui_locales: 'ar' });
    expect(htmlLang(login)?.[1]).toBe('ar');
    expect(htmlLang(login)?.[2]).toBe(' dir="rtl"');
    expect(login.body).toContain('تسجيل الدخول');
  });

  it('keeps field names and data-* attributes the same in every language', async () => {
    const english = await startSignIn(new TestBrowser(app), { ui_locales: 'en' });
    for (const language of ['de', 'fr', 'ar']) {
      const page = await startSignIn(new TestBrowser(app), { ui_locales: language });
      expect(htmlLang(page)?.[1]).toBe(language);
      expect(languageIndependentParts(page.body)).toEqual(languageIndependentParts(english.body));
    }
  });

  it('leaves the protocol error_description in English', async () => {
    const browser = new TestBrowser(app);
    const login = await startSignIn(browser, { ui_locales: 'de' });
    const consent = await browser.follow(
      await post(browser, login, { username: 'alice', password: 'alice-password-for-tests' }),
    );
    expect(htmlLang(consent)?.[1]).toBe('de');
    const denied = await post(browser, consent, { decision: 'deny' });
    expect(locationOf(denied).searchParams.get('error')).toBe('access_denied');
    expect(locationOf(denied).searchParams.get('error_description')).toBe('the user denied the request');
  });
});

describe('without ui_locales', () => {
  it('follows Accept-Language, and the switcher cookie over it', async () => {
    const browser = new TestBrowser(app, { acceptLanguage: 'fr-CA,fr;q=0.8' });
    const login = await startSignIn(browser);
    expect(htmlLang(login)?.[1]).toBe('fr');
    expect(login.body).toContain('Nom d’utilisateur');
    const switchTo = /<a href="([^"]+)" hreflang="ar"/.exec(login.body)?.[1]?.replaceAll('&amp;', '&');
    expect(switchTo).toBeDefined();
    const switched = await browser.get(switchTo ?? '');
    expect(switched.statusCode).toBe(303);
    expect(browser.cookies.get('lang')).toBe('ar');
    const again = await browser.follow(switched);
    expect(browser.lastUrl).toMatch(/^\/interaction\/[^/]+\/login/);
    expect(htmlLang(again)?.[1]).toBe('ar');
  });

  it('falls back to English for a language it does not have', async () => {
    const login = await startSignIn(new TestBrowser(app, { acceptLanguage: 'ja, zh;q=0.8' }));
    expect(htmlLang(login)?.[1]).toBe('en');
    expect(htmlLang(login)?.[2]).toBeUndefined();
  });

  it('returns from the switcher only to a path on this server', async () => {
    for (const target of ['//evil.example', '/\\evil.example', 'https://evil.example/']) {
      const response = await app.inject({
        method: 'GET',
        url: `/language?set=de&return=${encodeURIComponent(target)}`,
      });
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/');
    }
  });
});

/** Alice (password only) signs in from /account in this browser; returns the account page. */
async function accountPage(browser: TestBrowser) {
  const login = await browser.follow(await browser.get('/account'));
  const signedIn = await post(browser, login, { username: 'alice', password: 'alice-password-for-tests' });
  expect(locationOf(signedIn).pathname).toBe('/account');
  return browser.follow(signedIn);
}

describe('account page', () => {
  it('speaks German, security events included, to a German browser', async () => {
    const page = await accountPage(new TestBrowser(app, { acceptLanguage: 'de-DE,de;q=0.9' }));
    expect(htmlLang(page)?.[1]).toBe('de');
    expect(page.body).toContain('<title>Ihr Konto');
    expect(page.body).toContain('<h2 id="password-title">Passwort</h2>');
    expect(page.body).toContain('<h2 id="security-events-title">Letzte Sicherheitsereignisse</h2>');
    expect(page.body).not.toContain('Active sessions');
  });

  it('answers a change in the language of the page', async () => {
    const browser = new TestBrowser(app, { acceptLanguage: 'de' });
    const page = await accountPage(browser);
    const ended = await browser.post('/account/sessions/sign-out-others', {
      csrf: hiddenFields(page.body).csrf ?? '',
    });
    expect(ended.statusCode).toBe(303);
    const after = await browser.follow(ended);
    expect(after.body).toMatch(/id="account-notice">\d+ andere Sitzung(en)? abgemeldet\.</);
  });

  it('opens a mailed link in the browser’s language, even one that no longer works', async () => {
    const page = await new TestBrowser(app, { acceptLanguage: 'fr' }).get('/verify-email?token=used-up');
    expect(page.statusCode).toBe(400);
    expect(htmlLang(page)?.[1]).toBe('fr');
    expect(page.body).toContain('Ce lien n’est plus valide');
    expect(page.body).toContain('data-action="account">Aller à votre compte</a>');
  });

  it('names each security event in the language', () => {
    const section = renderSecurityEventsSection(
      [
        {
          time: 1_800_000_000,
          event: AUDIT_EVENTS.loginFailed,
          ip: '203.0.113.9',
          application: null,
          failure: true,
        },
      ],
      translatorFor('de'),
    ).value;
    expect(section).toContain('<strong>Anmeldung abgelehnt</strong>');
    expect(section).toContain('</time> von 203.0.113.9');
    expect(section).toContain('Wenn Sie eines davon nicht wiedererkennen');
  });

  it('sets up a passkey and shows new recovery codes in the language, copy answers included', () => {
    const french = { t: translatorFor('fr') };
    const passkey = renderEnrolPasskeyPage({
      form: { options: {}, csrfToken: 'c' },
      name: 'Téléphone',
      basePath: '',
      language: french,
    });
    expect(passkey).toContain('<title>Ajouter une clé d’accès');
    expect(passkey).toContain('>Créer la clé d’accès</button>');
    const codes = renderRecoveryCodesShownPage({
      codes: ['ABCDE-23456'],
      continueCsrfToken: 'c',
      basePath: '',
      language: { t: translatorFor('ar') },
    });
    expect(codes).toContain('<html lang="ar" dir="rtl">');
    expect(codes).toContain('<p hidden id="recovery-codes-copied">تم النسخ. الصقها في مكان آمن.</p>');
    expect(codes).toContain('>حفظتها، متابعة</button>');
  });

  it('is right to left in Arabic, with the switcher cookie', async () => {
    const browser = new TestBrowser(app, { acceptLanguage: 'en' });
    browser.cookies.set('lang', 'ar');
    const page = await accountPage(browser);
    expect(htmlLang(page)?.[1]).toBe('ar');
    expect(htmlLang(page)?.[2]).toBe(' dir="rtl"');
    expect(page.body).toContain('<h2 id="sessions-title">الجلسات النشطة</h2>');
    expect(page.body).toContain('<h2 id="recovery-title">رموز الاسترداد</h2>');
  });
});

describe('start page and upstream links', () => {
  it('shows the start page in Arabic, right to left', async () => {
    const page = await app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html', 'accept-language': 'ar' },
    });
    expect(htmlLang(page)?.[1]).toBe('ar');
    expect(htmlLang(page)?.[2]).toBe(' dir="rtl"');
    expect(page.body).toContain('<title>خادم التفويض');
    expect(page.body).toContain('data-action="account">حسابك</a>');
  });

  it('asks in German for the proof that links an upstream sign-in, each way worded', () => {
    const german = { t: translatorFor('de') };
    const input = {
      providerName: 'Upstream',
      email: 'greta@example.test',
      csrfToken: 'c',
      linkToken: 'l',
      loginUrl: '/login',
      basePath: '',
      language: german,
    };
    const both = renderLinkAccountPage({ ...input, passwordAction: '/p', mailAction: '/m' });
    expect(both).toContain('<title>Konto verknüpfen');
    expect(both).toContain('mit seinem Passwort oder mit einem Link, den wir an seine Adresse senden.');
    expect(both).toContain('>Link per E-Mail senden</button>');
    const none = renderLinkAccountPage({ ...input, passwordAction: null, mailAction: null });
    expect(none).toContain('Es kann hier nicht mit Upstream verknüpft werden');
  });
});

describe('authorization errors', () => {
  it('answer in the request’s ui_locales over the browser’s language', async () => {
    const browser = new TestBrowser(app, { acceptLanguage: 'fr' });
    const page = await browser.get(
      authorizePath({
        client_id: 'no-such-client',
        response_type: 'code',
        scope: 'openid',
        ui_locales: 'de',
      }),
    );
    expect(page.statusCode).toBe(400);
    expect(htmlLang(page)?.[1]).toBe('de');
    expect(page.body).toContain('Diese Anmeldeanfrage ist ungültig');
    expect(page.body).toContain('<code>invalid_request</code>');
  });
});

describe('mails', () => {
  it('sends the reset mail in German to a user who last signed in in German', async () => {
    const browser = new TestBrowser(app);
    const login = await startSignIn(browser, { ui_locales: 'de' });
    await post(browser, login, { username: GRETA.username, password: GRETA.password });
    const [row] = await database.handle.db.select().from(users).where(eq(users.sub, GRETA.sub));
    expect(row?.locale).toBe('de');

    // Asked for from an English page: the mail still speaks the language Greta uses.
    const englishBrowser = new TestBrowser(app, { acceptLanguage: 'en' });
    const form = await englishBrowser.get('/forgot-password');
    expect(htmlLang(form)?.[1]).toBe('en');
    await englishBrowser.post('/forgot-password', { ...hiddenFields(form.body), email: GRETA.email });
    await app.passwordRecovery?.settled();
    const mail = await smtp.nextMailTo(GRETA.email);
    expect(mail.parsed.subject).toBe('Passwort für issuer.example.test zurücksetzen');
    expect(mail.parsed.text).toContain('Neues Passwort wählen');
    expect(mail.parsed.html).toContain('<html lang="de">');
    expect(mail.parsed.html).toContain('Neues Passwort wählen');
  });
});
