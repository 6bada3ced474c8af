import { ACR_VALUES } from '@oidc-orders/oauth-core';
import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecoveryCodeRepository } from '../src/mfa/recovery-codes.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { FORM, form, startTestApp, TEST_KEY_ENCRYPTION_KEY, type TestApp } from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { type RedeemingClient, redeemRedirect } from './helpers/flows.js';
import {
  ORDERS_API,
  REQUIRE_MFA_CLIENT,
  requireMfaClientEntry,
  testSeed,
  WEB_REDIRECT_URI,
} from './helpers/seed.js';
import { ALICE, authorizePath, pkcePair } from './sign-in-fixtures.js';

/** Test-only authenticator secrets (base32). */
const CAROL = { sub: 'u-carol', username: 'carol', password: 'carol-password-for-tests' } as const;
const CAROL_TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const DAVE = { sub: 'u-dave', username: 'dave', password: 'dave-password-for-tests' } as const;
const STRICT = REQUIRE_MFA_CLIENT;

function mfaSeed(): SeedDocument {
  const seed = testSeed();
  return {
    ...seed,
    clients: [
      ...(seed.clients ?? []),
      requireMfaClientEntry(),
      {
        client_id: 'tv',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
        scope: 'openid profile',
      },
    ],
    users: [
      ...(seed.users ?? []),
      { sub: CAROL.sub, username: CAROL.username, password: CAROL.password, totp_secret: CAROL_TOTP },
      { sub: DAVE.sub, username: DAVE.username, password: DAVE.password, mfa_required: true },
    ],
  };
}

const clock = createTestClock(Math.floor(Date.now() / 1000));
const codeFor = (secret: string, atSeconds = clock.nowSeconds()) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: atSeconds * 1000 });

let app: TestApp;
/** Alice's recovery codes, from the page shown after her first enrolment. */
let aliceRecoveryCodes: string[] = [];
let database: TestDatabase;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, database, close } = await startTestApp({
    seed: mfaSeed(),
    clock,
    env: { LOGIN_MAX_FAILURES_PER_USERNAME: '3' },
  }));
});
afterAll(() => close());

interface Started {
  browser: TestBrowser;
  verifier: string;
  response: LightMyRequestResponse;
}

async function authorize(
  params: Record<string, string> = {},
  browser = new TestBrowser(app),
  client = { clientId: 'web', redirectUri: WEB_REDIRECT_URI },
): Promise<Started> {
  const { verifier, challenge } = pkcePair();
  const response = await browser.get(
    authorizePath({
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      scope: 'openid profile',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      nonce: 'n-1',
      ...params,
    }),
  );
  return { browser, verifier, response };
}

async function submitPassword(browser: TestBrowser, user: { username: string; password: string }) {
  const page = await browser.get(browser.lastUrl);
  return browser.post(browser.lastUrl, { ...hiddenFields(page.body), ...user });
}

/** Password, then onto the otp page the server sends the browser to. */
async function passwordToOtp(browser: TestBrowser, user: { username: string; password: string }) {
  const response = await submitPassword(browser, user);
  expect(locationOf(response).pathname).toMatch(/\/otp$/);
  await browser.get(response.headers.location as string);
}

async function submitOtp(browser: TestBrowser, otp: string) {
  const page = await browser.get(browser.lastUrl);
  return browser.post(browser.lastUrl, { ...hiddenFields(page.body), otp });
}

/** Follows a redirect to one of this server's pages and returns that page. */
async function pageAfter(browser: TestBrowser, response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(303);
  return browser.get(response.headers.location as string);
}

async function idTokenFor(response: LightMyRequestResponse, verifier: string, client?: RedeemingClient) {
  return decodeJwt((await redeemRedirect(app, response, verifier, client)).id_token);
}

describe('authenticator app as the second factor', () => {
  it('after the password, a user with an app gets the otp form; the code completes sign-in with amr pwd otp mfa', async () => {
    const { browser, verifier, response } = await authorize();
    const afterPassword = await submitPassword(await landOnLogin(browser, response), CAROL);
    const otpPage = await pageAfter(browser, afterPassword);
    expect(new URL(browser.lastUrl, 'http://x').pathname).toMatch(/\/otp$/);
    expect(otpPage.body).toMatch(/<form method="post"/);
    expect(otpPage.body).toMatch(/name="otp"/);
    expect(otpPage.body).not.toMatch(/name="password"/);

    const wrong = await submitOtp(browser, '000000');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toMatch(/name="otp"/);

    clock.advance(30);
    const done = await submitOtp(browser, codeFor(CAROL_TOTP));
    const claims = await idTokenFor(done, verifier);
    expect(claims).toMatchObject({ sub: CAROL.sub, acr: ACR_VALUES.mfa, auth_time: clock.nowSeconds() });
    expect([...(claims.amr as string[])].sort()).toEqual(['mfa', 'otp', 'pwd']);
  });

  it('a password-only sign-in carries amr pwd and the password level', async () => {
    const { browser, verifier, response } = await authorize();
    const done = await submitPassword(await landOnLogin(browser, response), ALICE);
    const claims = await idTokenFor(done, verifier);
    expect(claims).toMatchObject({ amr: ['pwd'], acr: ACR_VALUES.password });
  });

  it('the seeded secret is stored encrypted, never in clear', async () => {
    const rows = await database.handle.db.execute(sql`select secret_encrypted from totp_credentials`);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(CAROL_TOTP);
    expect(stored).toMatch(/v1\./);
  });

  it('the same code is accepted once per user and time step, also by a second instance on the same database', async () => {
    clock.advance(60);
    const code = codeFor(CAROL_TOTP);
    const first = await authorize();
    await passwordToOtp(await landOnLogin(first.browser, first.response), CAROL);
    expect(locationOf(await submitOtp(first.browser, code)).pathname).toBe('/callback');

    const second = await authorize();
    await passwordToOtp(await landOnLogin(second.browser, second.response), CAROL);
    expect((await submitOtp(second.browser, code)).statusCode).toBe(401);

    const other = await startTestApp({ seed: mfaSeed(), clock, database });
    try {
      const third = await authorize({}, new TestBrowser(other.app));
      await passwordToOtp(await landOnLogin(third.browser, third.response), CAROL);
      expect((await submitOtp(third.browser, code)).statusCode).toBe(401);
      // The next time step works on that instance.
      clock.advance(30);
      expect(locationOf(await submitOtp(third.browser, codeFor(CAROL_TOTP))).pathname).toBe('/callback');
    } finally {
      await other.app.close();
    }
  });

  it('wrong codes until lockout: 429 with Retry-After on the otp form, even for the right code', async () => {
    clock.advance(3600);
    const { browser, response } = await authorize();
    await passwordToOtp(await landOnLogin(browser, response), CAROL);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await submitOtp(browser, '111111')).statusCode).toBe(401);
    }
    const locked = await submitOtp(browser, codeFor(CAROL_TOTP));
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(locked.body).toMatch(/name="otp"/);
    clock.advance(3600);
  });
});

describe('step-up and policy', () => {
  it('acr_values asking for multi-factor on a password-only session shows the otp form alone', async () => {
    clock.advance(30);
    const first = await authorize();
    await submitPassword(await landOnLogin(first.browser, first.response), CAROL);
    // The user leaves at the otp form; the session holds the password only. A new request:
    const { browser, verifier, response } = await authorize({ acr_values: ACR_VALUES.mfa }, first.browser);
    expect(response.statusCode).toBe(303);
    expect(locationOf(response).pathname).toMatch(/\/otp$/);
    await browser.get(response.headers.location as string);
    const done = await submitOtp(browser, codeFor(CAROL_TOTP));
    expect((await idTokenFor(done, verifier)).acr).toBe(ACR_VALUES.mfa);
  });

  it('prompt=none that cannot meet the requested level answers interaction_required', async () => {
    const first = await authorize();
    await submitPassword(await landOnLogin(first.browser, first.response), ALICE);
    const { response } = await authorize({ prompt: 'none', acr_values: ACR_VALUES.mfa }, first.browser);
    const callback = locationOf(response);
    expect(callback.searchParams.get('error')).toBe('interaction_required');
  });

  it('a require_mfa client leads a user without a factor to enrol one before the code', async () => {
    const client = { clientId: STRICT.clientId, redirectUri: STRICT.redirectUri };
    const { browser, verifier, response } = await authorize({}, new TestBrowser(app), client);
    const afterPassword = await submitPassword(await landOnLogin(browser, response), ALICE);
    const enrolPage = await pageAfter(browser, afterPassword);
    expect(new URL(browser.lastUrl, 'http://x').pathname).toMatch(/\/enrol$/);
    const secret = /data-totp-secret="([A-Z2-7]+)"/.exec(enrolPage.body)?.[1];
    expect(secret).toEqual(expect.any(String));
    expect(enrolPage.body).toMatch(/src="data:image\/svg\+xml;base64,/);

    const wrong = await browser.post(browser.lastUrl, { ...hiddenFields(enrolPage.body), otp: '000000' });
    expect(wrong.statusCode).toBe(400);
    const confirmed = await browser.post(browser.lastUrl, {
      ...hiddenFields(wrong.body),
      otp: codeFor(secret!),
    });
    // The first factor: ten recovery codes, shown once, then on to the application.
    expect(confirmed.statusCode).toBe(200);
    aliceRecoveryCodes = [...confirmed.body.matchAll(/data-recovery-code="([A-Z0-9-]+)"/g)].map(
      (match) => match[1]!,
    );
    expect(new Set(aliceRecoveryCodes).size).toBe(10);
    const action = /<form method="post" class="stack" action="([^"]+)"/.exec(confirmed.body)?.[1];
    const done = await browser.post(action!, hiddenFields(confirmed.body));
    const claims = await idTokenFor(done, verifier, { ...client, secret: STRICT.secret });
    expect(claims).toMatchObject({ sub: ALICE.sub, acr: ACR_VALUES.mfa });

    // From now on Alice is asked for her app after the password, whatever the client.
    clock.advance(30);
    const next = await authorize();
    const afterNextPassword = await submitPassword(await landOnLogin(next.browser, next.response), ALICE);
    expect(locationOf(afterNextPassword).pathname).toMatch(/\/otp$/);
  });

  it('a recovery code, on the page linked from the otp form, works once', async () => {
    const signIn = async () => {
      const { browser, verifier, response } = await authorize();
      await passwordToOtp(await landOnLogin(browser, response), ALICE);
      const otpPage = await browser.get(browser.lastUrl);
      const link = /<a href="([^"]+)" data-link="recovery-code"/.exec(otpPage.body)?.[1];
      const page = await browser.get(link!);
      expect(page.body).toMatch(/name="recovery_code"/);
      // It says the format, and links back to the code page.
      expect(page.body).toContain('like ABCDE-23456');
      const back = /<a href="([^"]+)" data-link="otp"/.exec(page.body)?.[1];
      expect(new URL(back!, 'http://x').pathname).toBe(
        new URL(browser.lastUrl.replace('/recovery', '/otp'), 'http://x').pathname,
      );
      return { browser, verifier, page };
    };
    const first = await signIn();
    const used = await first.browser.post(first.browser.lastUrl, {
      ...hiddenFields(first.page.body),
      recovery_code: aliceRecoveryCodes[0]!,
    });
    // The person is told the code is used up and how many are left, then goes on.
    expect(used.statusCode).toBe(200);
    expect(used.body).toContain('data-remaining="9">9 recovery codes left</strong>');
    const next = /<a class="button" href="([^"]+)" data-action="continue">/.exec(used.body)![1]!;
    const claims = await idTokenFor(await first.browser.get(next), first.verifier);
    expect(claims).toMatchObject({ acr: ACR_VALUES.mfa });
    expect(claims.amr).toEqual(expect.arrayContaining(['pwd', 'otp', 'mfa']));

    const second = await signIn();
    const again = await second.browser.post(second.browser.lastUrl, {
      ...hiddenFields(second.page.body),
      recovery_code: aliceRecoveryCodes[0]!,
    });
    expect(again.statusCode).toBe(401);
    expect(again.body).toMatch(/name="recovery_code"/);
  });

  it('regenerating the recovery codes invalidates the old set', async () => {
    const repository = createRecoveryCodeRepository({
      db: database.handle.db,
      keyEncryptionKey: new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url')),
      clock,
      random: app.protocol.random,
    });
    expect(await repository.remaining(ALICE.sub)).toBe(9);
    const fresh = await repository.regenerate(ALICE.sub);
    expect(await repository.use(ALICE.sub, aliceRecoveryCodes[1]!)).toBe(false);
    expect(await repository.use(ALICE.sub, fresh[0]!.toLowerCase())).toBe(true);
    expect(await repository.use(ALICE.sub, fresh[0]!)).toBe(false);
    expect(await repository.remaining(ALICE.sub)).toBe(9);
  });

  it('a user with mfa_required is led to enrolment too', async () => {
    const { browser, response } = await authorize();
    const afterPassword = await submitPassword(await landOnLogin(browser, response), DAVE);
    expect(locationOf(afterPassword).pathname).toMatch(/\/enrol$/);
  });

  it('discovery publishes acr_values_supported and amr/acr claims', async () => {
    const discovery = (await app.inject({ url: '/.well-known/openid-configuration' })).json();
    expect(discovery.acr_values_supported).toEqual([
      ACR_VALUES.password,
      ACR_VALUES.mfa,
      ACR_VALUES.phishingResistant,
    ]);
    expect(discovery.claims_supported).toEqual(expect.arrayContaining(['amr', 'acr']));
  });
});

describe('device verification page', () => {
  it('follows the same rules: after the password a user with an app gets the otp form', async () => {
    const started = await app.inject({
      method: 'POST',
      url: '/device_authorization',
      headers: FORM,
      payload: form({ client_id: 'tv', scope: 'openid profile' }),
    });
    expect(started.statusCode).toBe(200);
    const browser = new TestBrowser(app);
    const codePage = await browser.get('/device');
    const afterCode = await browser.post('/device', {
      ...hiddenFields(codePage.body),
      user_code: started.json().user_code,
    });
    await landOnLogin(browser, afterCode);
    const afterPassword = await submitPassword(browser, CAROL);
    expect(locationOf(afterPassword).pathname).toMatch(/\/otp$/);
  });
});

describe('a resource with require_mfa', () => {
  it('asks for the second factor when its scopes are requested', async () => {
    const seed = mfaSeed();
    seed.resources = (seed.resources ?? []).map((resource) =>
      resource.id === ORDERS_API ? { ...resource, require_mfa: true } : resource,
    );
    const other = await startTestApp({ seed, clock });
    try {
      const { browser, response } = await authorize(
        { scope: 'openid orders.read' },
        new TestBrowser(other.app),
      );
      const afterPassword = await submitPassword(await landOnLogin(browser, response), DAVE);
      expect(locationOf(afterPassword).pathname).toMatch(/\/enrol$/);
    } finally {
      await other.close();
    }
  });
});

/** /authorize redirected to the login page: load it so the browser is there. */
async function landOnLogin(browser: TestBrowser, response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(303);
  expect(locationOf(response).pathname).toMatch(/\/login$/);
  await browser.get(response.headers.location as string);
  return browser;
}
