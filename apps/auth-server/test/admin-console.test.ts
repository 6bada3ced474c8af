/**
 * The operator console's guard (src/routes/admin-console/guard.ts) by plain HTTP: every /admin
 * route declares its guard and sends a stranger to sign in; a signed-in person who is not in the
 * seed's `admins` gets a 403 page; an admin without a second factor is sent to enrol one; an admin
 * signed in with TOTP sees the console, and an action needs its confirm page's CSRF token.
 */

import { createTestClock } from '@oidc-orders/oauth-core/testing';
import type { LightMyRequestResponse, RouteOptions } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTotpRepository } from '../src/mfa/totp-repository.js';
import { parseSeedDocument, SeedError } from '../src/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { FORM, startTestApp, type TestApp } from './helpers/app.js';
import { signInSeed } from './sign-in-fixtures.js';

const ADMIN = { sub: 'u-olga', username: 'olga', password: 'olga-password-for-tests' } as const;
const ADMIN_TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const NEW_ADMIN = { sub: 'u-nina', username: 'nina', password: 'nina-password-for-tests' } as const;
const PERSON = { sub: 'u-pete', username: 'pete', password: 'pete-password-for-tests' } as const;
/** An admin who signs in without a factor, then gets one from elsewhere: the session lacks it. */
const LATE_ADMIN = { sub: 'u-sam', username: 'sam', password: 'sam-password-for-tests' } as const;

const clock = createTestClock(Math.floor(Date.now() / 1000));
const routes: RouteOptions[] = [];
let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  const seed = signInSeed();
  ({ app, close } = await startTestApp({
    clock,
    onRoute: (route) => void routes.push(route),
    seed: {
      ...seed,
      users: [
        ...(seed.users ?? []),
        { ...ADMIN, totp_secret: ADMIN_TOTP },
        { ...NEW_ADMIN },
        { ...PERSON, email: 'pete@example.test' },
        { ...LATE_ADMIN },
      ],
      admins: [ADMIN.username, NEW_ADMIN.username, LATE_ADMIN.username],
    },
  }));
});
afterAll(() => close());

/** The console's routes: /admin and below, except the admin API's area (its own guard, tokens). */
const consoleRoutes = () =>
  routes.filter(
    (route) =>
      route.url === '/admin' || (route.url.startsWith('/admin/') && !route.url.startsWith('/admin/api/')),
  );
const methodsOf = (route: RouteOptions) => ([] as string[]).concat(route.method).filter((m) => m !== 'HEAD');
const concrete = (url: string) => url.replace(/:\w+/g, 'x');

/** The login form of the console's sign-in; returns what the server answers after the password. */
async function signIn(browser: TestBrowser, who: { username: string; password: string }) {
  const start = await browser.get('/admin');
  expect(start.statusCode).toBe(303);
  expect(locationOf(start).pathname).toMatch(/\/interaction\/[^/]+\/login$/);
  const login = await browser.get(start.headers.location as string);
  return browser.post(browser.lastUrl, {
    ...hiddenFields(login.body),
    username: who.username,
    password: who.password,
  });
}

/** Signs in the TOTP admin (password, then a code) and returns the console's overview. */
async function signInAdmin(browser: TestBrowser): Promise<LightMyRequestResponse> {
  const afterPassword = await signIn(browser, ADMIN);
  expect(locationOf(afterPassword).pathname).toMatch(/\/otp$/);
  const otpPage = await browser.get(afterPassword.headers.location as string);
  clock.advance(30);
  const code = TOTP.generate({ secret: Secret.fromBase32(ADMIN_TOTP), timestamp: clock.nowSeconds() * 1000 });
  const afterCode = await browser.post(browser.lastUrl, { ...hiddenFields(otpPage.body), otp: code });
  expect(locationOf(afterCode).pathname).toBe('/admin');
  return browser.get('/admin');
}

describe('the console area', () => {
  it('has a guard on every route, and only actions are POSTs', () => {
    expect(consoleRoutes().length).toBeGreaterThan(10);
    const unguarded = consoleRoutes().filter((route) => route.config?.console === undefined);
    expect(unguarded.map((route) => `${methodsOf(route)} ${route.url}`)).toEqual([]);
    for (const route of consoleRoutes()) {
      const expected = methodsOf(route).includes('POST') ? 'action' : 'page';
      expect(route.config?.console, route.url).toBe(expected);
    }
  });

  it('sends a browser that is not signed in to the login page, on every route', async () => {
    for (const route of consoleRoutes()) {
      for (const method of methodsOf(route)) {
        const response = await app.inject({
          method: method as 'GET' | 'POST',
          url: concrete(route.url),
          ...(method === 'POST' ? { headers: FORM, payload: 'csrf=x' } : {}),
        });
        expect(response.statusCode, `${method} ${route.url}`).toBe(303);
        expect(locationOf(response).pathname, `${method} ${route.url}`).toMatch(
          /\/interaction\/[^/]+\/login$/,
        );
        expect(locationOf(response).searchParams.get('client_id')).toBe('admin-console');
      }
    }
  });
});

describe('who gets in', () => {
  it('answers 403 to a signed-in person who is not one of the admins, without asking for a factor', async () => {
    const browser = new TestBrowser(app);
    const afterPassword = await signIn(browser, PERSON);
    expect(locationOf(afterPassword).pathname).toBe('/admin');
    const page = await browser.get('/admin');
    expect(page.statusCode).toBe(403);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('<h1 id="page-title">Not an operator</h1>');
    expect(page.body).not.toContain('console-nav');
    const action = await browser.post(`/admin/users/${PERSON.sub}/disable`, { csrf: 'x' });
    expect(action.statusCode).toBe(403);
  });

  it('sends an admin without a second factor to enrol one (step-up), never into the console', async () => {
    const browser = new TestBrowser(app);
    const afterPassword = await signIn(browser, NEW_ADMIN);
    // The first sign-in asks only for the password: it is the console that needs more.
    expect(locationOf(afterPassword).pathname).toBe('/admin');
    const stepUp = await browser.get('/admin');
    expect(stepUp.statusCode).toBe(303);
    expect(locationOf(stepUp).pathname).toMatch(/\/interaction\/[^/]+\/enrol$/);
    const enrol = await browser.get(stepUp.headers.location as string);
    expect(enrol.statusCode).toBe(200);
    const users = await browser.get('/admin/users');
    expect(locationOf(users).pathname).toMatch(/\/enrol$/);
  });

  it('asks an admin whose session has no second factor for the one they have (step-up to the otp page)', async () => {
    const browser = new TestBrowser(app);
    expect(locationOf(await signIn(browser, LATE_ADMIN)).pathname).toBe('/admin');
    // An authenticator app added after this session began (from another browser).
    const totp = createTotpRepository({
      db: app.database.db,
      keyEncryptionKey: app.config.keyEncryptionKey,
      clock,
      random: app.protocol.random,
      issuer: app.protocol.config.issuer,
    });
    const enrolment = await totp.startEnrolment(LATE_ADMIN.sub, LATE_ADMIN.username, 'Phone');
    const codeAt = (seconds: number) =>
      TOTP.generate({ secret: Secret.fromBase32(enrolment.secret), timestamp: seconds * 1000 });
    expect(await totp.confirm(enrolment.id, LATE_ADMIN.sub, codeAt(clock.nowSeconds()))).toBe(true);

    const stepUp = await browser.get('/admin');
    expect(stepUp.statusCode).toBe(303);
    expect(locationOf(stepUp).pathname).toMatch(/\/interaction\/[^/]+\/otp$/);
    const otpPage = await browser.get(stepUp.headers.location as string);
    expect(otpPage.body).toContain('name="otp"');
    expect(otpPage.body).not.toContain('name="password"');
    clock.advance(30);
    const afterCode = await browser.post(browser.lastUrl, {
      ...hiddenFields(otpPage.body),
      otp: codeAt(clock.nowSeconds()),
    });
    expect(locationOf(afterCode).pathname).toBe('/admin');
    expect((await browser.get('/admin')).statusCode).toBe(200);
  });

  it("speaks the browser's language: the overview in German and in Arabic (right to left), the 403 page in French", async () => {
    const german = new TestBrowser(app, { acceptLanguage: 'de-DE,de;q=0.9' });
    const inGerman = await signInAdmin(german);
    expect(inGerman.body).toContain('<html lang="de"');
    expect(inGerman.body).toContain('Betriebskonsole');
    expect(inGerman.body).not.toContain('Operator console');
    const arabic = new TestBrowser(app, { acceptLanguage: 'ar' });
    const inArabic = await signInAdmin(arabic);
    expect(inArabic.body).toMatch(/<html lang="ar" dir="rtl"/);
    expect(inArabic.body).toContain('لوحة تحكم المشغّل');
    // Field names, URLs and data attributes stay as they are in every language.
    expect(inArabic.body).toContain('href="/admin/users"');
    const french = new TestBrowser(app, { acceptLanguage: 'fr' });
    await signIn(french, PERSON);
    const refused = await french.get('/admin');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('<html lang="fr"');
    expect(refused.body).toContain('Accès réservé aux opérateurs');
  });

  it('shows the console to an admin signed in with TOTP', async () => {
    // One failed sign-in, so the overview has a failure to count beside the sign-ins.
    const stranger = new TestBrowser(app);
    await signIn(stranger, { username: PERSON.username, password: 'not-the-password' });
    const browser = new TestBrowser(app);
    await signInAdmin(browser);
    await app.auditEventWriter.flush();
    const overview = await browser.get('/admin');
    expect(overview.statusCode).toBe(200);
    const sumOf = (attribute: string) =>
      [...overview.body.matchAll(new RegExp(`<td ${attribute}>(\\d+)</td>`, 'g'))].reduce(
        (sum, match) => sum + Number(match[1]),
        0,
      );
    expect(sumOf('data-sign-ins')).toBeGreaterThanOrEqual(3);
    expect(sumOf('data-failures')).toBeGreaterThanOrEqual(1);
    expect(overview.body).toContain('<h1 id="page-title">Operator console</h1>');
    expect(overview.body).toContain('aria-current="page"');
    const users = await browser.get(`/admin/users?q=${PERSON.username}`);
    expect(users.statusCode).toBe(200);
    expect(users.body).toContain(`data-user="${PERSON.sub}"`);
    expect(users.body).not.toContain(`data-user="${ADMIN.sub}"`);
    for (const path of [
      '/admin/sessions',
      '/admin/clients',
      '/admin/clients/web',
      '/admin/keys',
      '/admin/audit',
    ]) {
      expect((await browser.get(path)).statusCode, path).toBe(200);
    }
  });
});

describe('actions', () => {
  it("refuses a POST without the confirm page's CSRF token, and acts with it (post/redirect/get)", async () => {
    const browser = new TestBrowser(app);
    await signInAdmin(browser);
    const confirm = await browser.get(`/admin/users/${PERSON.sub}/disable`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain(`action="/admin/users/${PERSON.sub}/disable"`);
    const { csrf } = hiddenFields(confirm.body);
    expect(csrf).toBeTruthy();

    const forged = await browser.post(`/admin/users/${PERSON.sub}/disable`, { csrf: 'forged' });
    expect(forged.statusCode).toBe(403);
    expect((await browser.get(`/admin/users/${PERSON.sub}`)).body).toContain(
      '<span data-status>enabled</span>',
    );
    // Without any cookie, the same token is worth nothing.
    const elsewhere = await app.inject({
      method: 'POST',
      url: `/admin/users/${PERSON.sub}/disable`,
      headers: FORM,
      payload: `csrf=${csrf}`,
    });
    expect(elsewhere.statusCode).toBe(303);
    expect(locationOf(elsewhere).pathname).toMatch(/\/login$/);

    const done = await browser.post(`/admin/users/${PERSON.sub}/disable`, { csrf: csrf as string });
    expect(done.statusCode).toBe(303);
    expect(locationOf(done).pathname).toBe(`/admin/users/${PERSON.sub}`);
    const result = await browser.get(done.headers.location as string);
    expect(result.body).toContain('<span data-status>disabled</span>');
    expect(result.body).toContain('class="notice"');
    expect(result.body).toContain('data-action="enable"');

    // The change is an audit event naming the operator, on the audit log filtered to the user.
    await app.auditEventWriter.flush();
    const audit = await browser.get(`/admin/audit?sub=${PERSON.sub}&event=auth.admin.user_disabled`);
    expect(audit.statusCode).toBe(200);
    expect(audit.body).toContain('data-event="auth.admin.user_disabled"');
    expect(audit.body).toContain(`<td data-actor>${ADMIN.sub}</td>`);

    // The seed file still names the user: the seed plan says the operator's disable holds.
    const plan = await browser.get('/admin/seed-plan');
    expect(plan.statusCode).toBe(200);
    expect(plan.body).toContain(`<code>user ${PERSON.sub}</code>: disabled by an operator: stays disabled`);
    expect(plan.body).not.toContain('data-change=');
    expect((await browser.get('/admin')).body).toContain('data-seed-drift="none"');
  });
});

describe('the seed member admins', () => {
  it('is a list of usernames; a repeated one is refused at load', () => {
    expect(parseSeedDocument({ admins: ['olga', 'nina'] }).admins).toEqual(['olga', 'nina']);
    expect(() => parseSeedDocument({ admins: ['olga', 'olga'] })).toThrow(SeedError);
    expect(() => parseSeedDocument({ admins: [''] })).toThrow(/admins/);
  });
});
