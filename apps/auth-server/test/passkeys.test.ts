import { ACR_VALUES } from '@oidc-orders/oauth-core';
import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsersAdmin } from '../src/admin/users-admin.js';
import { AUDIT_EVENTS } from '../src/audit.js';
import { webauthnChallenges } from '../src/db/schema.js';
import { csrfTokenFor } from '../src/interaction/csrf.js';
import { createPasskeyRepository, type NewPasskey } from '../src/mfa/passkey-repository.js';
import {
  authenticationOptions,
  parseCredentialJson,
  registrationOptions,
  relyingPartyOf,
  verifyAuthentication,
} from '../src/mfa/webauthn.js';
import { CHALLENGE_TTL_SECONDS, createWebAuthnChallengeStore } from '../src/mfa/webauthn-challenges.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER, TEST_KEY_ENCRYPTION_KEY, type TestApp } from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { captureLogs } from './helpers/security.js';
import { REQUIRE_MFA_CLIENT, requireMfaClientEntry, testSeed, WEB_REDIRECT_URI } from './helpers/seed.js';
import { createAssertion, createSoftwareCredential } from './helpers/software-authenticator.js';
import { ALICE, authorizePath, pkcePair } from './sign-in-fixtures.js';

/**
 * Passkeys (README "Passkeys") by plain HTTP: storage, challenges, options, and every page's
 * routing. A real authenticator's signatures come from the Chromium test
 * (e2e/test/passkeys-browser.test.ts), which runs the whole ceremony.
 */
const PAT = { sub: 'u-pat', username: 'pat', password: 'pat-password-for-tests' } as const;
/** Signs in with software passkeys only (the tests of PAT count theirs). */
const KIM = { sub: 'u-kim', username: 'kim', password: 'kim-password-for-tests' } as const;
const CAROL = { sub: 'u-carol', username: 'carol', password: 'carol-password-for-tests' } as const;
const CAROL_TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const STRICT = REQUIRE_MFA_CLIENT;

function passkeySeed(): SeedDocument {
  const seed = testSeed();
  return {
    ...seed,
    clients: [...(seed.clients ?? []), requireMfaClientEntry()],
    users: [
      ...(seed.users ?? []),
      { sub: PAT.sub, username: PAT.username, password: PAT.password },
      { sub: KIM.sub, username: KIM.username, password: KIM.password },
      { sub: CAROL.sub, username: CAROL.username, password: CAROL.password, totp_secret: CAROL_TOTP },
    ],
  };
}

const logs = captureLogs();
const clock = createTestClock(Math.floor(Date.now() / 1000));
let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;
let repository: ReturnType<typeof createPasskeyRepository>;

beforeAll(async () => {
  ({ app, database, close } = await startTestApp({ seed: passkeySeed(), clock, logger: logs.logger }));
  repository = createPasskeyRepository({ db: database.handle.db, clock, random: app.protocol.random });
});
afterAll(() => close());

/** A stored credential (its key is never checked on these routing paths). */
const passkeyOf = (sub: string, id: string): NewPasskey => ({
  id,
  sub,
  userHandle: Buffer.from(`handle-of-${sub}`).toString('base64url'),
  name: 'Laptop',
  publicKey: Buffer.from('not-a-real-cose-key').toString('base64url'),
  counter: 0,
  transports: ['internal'],
  deviceType: 'singleDevice',
  backedUp: false,
  aaguid: '00000000-0000-0000-0000-000000000000',
});

const ISSUER_ORIGIN = new URL(TEST_ISSUER).origin;

/** Rows of the challenge table: stored registrations' challenges and spent sign-in ones. */
const challengeRowCount = async () =>
  (await database.handle.db.select({ n: sql<number>`count(*)::int` }).from(webauthnChallenges))[0]?.n ?? 0;

/** A cookie of the test browser by its name without the `__Host-` prefix (the issuer is https). */
const cookieOf = (browser: TestBrowser, name: string) =>
  [...browser.cookies].find(([cookie]) => cookie.endsWith(name))?.[1];

/** The JSON of a page's `data-passkey-options` attribute. */
function ceremonyOptionsOf(page: string) {
  const match = /data-passkey-options="([^"]*)"/.exec(page);
  expect(match, 'the page carries WebAuthn options').not.toBeNull();
  return JSON.parse(match![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
}

/** The login page's passkey button: where its ceremony posts, and the CSRF token it sends. */
function passkeyFormOf(page: string): { action: string; fields: Record<string, string> } {
  const button =
    /<button type="button" class="secondary" data-sign-in="passkey" data-passkey-action="([^"]+)" data-passkey-csrf="([^"]+)"/.exec(
      page,
    );
  expect(button, 'the login page has a passkey button').not.toBeNull();
  return { action: button![1]!.replace(/&amp;/g, '&'), fields: { csrf: button![2]! } };
}

async function authorize(browser: TestBrowser, params: Record<string, string> = {}, client = 'web') {
  const redirectUri = client === 'web' ? WEB_REDIRECT_URI : STRICT.redirectUri;
  const response = await browser.get(
    authorizePath({
      client_id: client,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid profile',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ...params,
    }),
  );
  return browser.follow(response);
}

type Person = { username: string; password: string };

async function submitPassword(browser: TestBrowser, loginPage: LightMyRequestResponse, user: Person) {
  return browser.post(browser.lastUrl, {
    ...hiddenFields(loginPage.body),
    username: user.username,
    password: user.password,
  });
}

describe('relying party and ceremony options', () => {
  it('derives the RP ID (host name, no port) and the origin from ISSUER', () => {
    expect(relyingPartyOf('http://localhost:4000')).toMatchObject({
      id: 'localhost',
      origin: 'http://localhost:4000',
    });
    expect(relyingPartyOf('https://id.example.com/tenant-a')).toMatchObject({
      id: 'id.example.com',
      origin: 'https://id.example.com',
    });
  });

  it('registration asks for a discoverable credential, user verification preferred, existing ones excluded', async () => {
    const rp = relyingPartyOf(TEST_ISSUER);
    const existing = { ...passkeyOf(PAT.sub, 'existing-id') };
    const options = await registrationOptions(rp, { ...PAT, name: 'Pat' }, existing.userHandle, [existing]);
    expect(options.rp).toEqual({ id: 'issuer.example.test', name: 'issuer.example.test' });
    expect(options.user).toMatchObject({ id: existing.userHandle, name: 'pat', displayName: 'Pat' });
    expect(options.authenticatorSelection).toMatchObject({
      residentKey: 'required',
      userVerification: 'preferred',
    });
    expect(options.excludeCredentials).toEqual([
      { id: 'existing-id', type: 'public-key', transports: ['internal'] },
    ]);
    expect(options.attestation).toBe('none');
  });

  it('authentication without a user lists no credentials (discoverable); with one, only theirs', async () => {
    const rp = relyingPartyOf(TEST_ISSUER);
    const discoverable = await authenticationOptions(rp, []);
    expect(discoverable).toMatchObject({ rpId: 'issuer.example.test', userVerification: 'preferred' });
    expect(discoverable.allowCredentials ?? []).toEqual([]);
    const known = await authenticationOptions(rp, [passkeyOf(PAT.sub, 'pat-key')]);
    expect(known.allowCredentials?.map((credential) => credential.id)).toEqual(['pat-key']);
  });

  it('refuses an assertion whose user handle is not the credential owner’s, before any signature check', async () => {
    const passkey = passkeyOf(PAT.sub, 'pat-key');
    const response = parseCredentialJson<Parameters<typeof verifyAuthentication>[1]>(
      JSON.stringify({
        id: 'pat-key',
        rawId: 'pat-key',
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: '', authenticatorData: '', signature: '', userHandle: 'someone-else' },
      }),
    );
    const outcome = await verifyAuthentication(relyingPartyOf(TEST_ISSUER), response!, 'challenge', passkey);
    expect(outcome).toEqual({ ok: false, reason: 'wrong_user' });
    expect(parseCredentialJson('not json')).toBeNull();
    expect(parseCredentialJson('{"id": 1}')).toBeNull();
  });
});

describe('passkey repository', () => {
  it('stores several named passkeys per user; renames and removes only the owner’s', async () => {
    expect(await repository.add(passkeyOf('u-repo', 'repo-1'))).toBe(true);
    expect(await repository.add({ ...passkeyOf('u-repo', 'repo-2'), name: 'Phone', backedUp: true })).toBe(
      true,
    );
    // WebAuthn §7.1 step 26: a credential ID registered once cannot be registered again.
    expect(await repository.add(passkeyOf('u-other', 'repo-1'))).toBe(false);
    expect((await repository.list('u-repo')).map(({ name, synced }) => [name, synced])).toEqual([
      ['Laptop', false],
      ['Phone', true],
    ]);
    expect(await repository.rename('repo-1', 'u-other', 'Stolen')).toBe(false);
    expect(await repository.rename('repo-1', 'u-repo', 'Desk')).toBe(true);
    expect(await repository.remove('repo-2', 'u-other')).toBe(false);
    expect(await repository.remove('repo-2', 'u-repo')).toBe(true);
    expect((await repository.list('u-repo')).map(({ name }) => name)).toEqual(['Desk']);
    expect(await repository.find('repo-1')).toMatchObject({ sub: 'u-repo', counter: 0 });
  });

  it('keeps one user handle per user; a new user gets a fresh random one', async () => {
    expect(await repository.userHandleOf('u-repo')).toBe(passkeyOf('u-repo', 'x').userHandle);
    const fresh = await repository.userHandleOf('u-nobody');
    expect(Buffer.from(fresh, 'base64url')).toHaveLength(32);
    expect(await repository.userHandleOf('u-nobody')).not.toBe(fresh);
  });

  it('records a use only against the counter it read (§6.1.1), with the new backup state', async () => {
    const stored = (await repository.find('repo-1'))!;
    expect(await repository.recordUse(stored, { counter: 5, backedUp: true })).toBe(true);
    // A second assertion verified against the same old counter loses the race.
    expect(await repository.recordUse(stored, { counter: 5, backedUp: true })).toBe(false);
    expect(await repository.find('repo-1')).toMatchObject({ counter: 5 });
    expect((await repository.list('u-repo'))[0]).toMatchObject({
      synced: true,
      lastUsedAt: clock.nowSeconds(),
    });
  });
});

describe('ceremony challenges', () => {
  const store = () =>
    createWebAuthnChallengeStore({
      db: database.handle.db,
      clock,
      random: app.protocol.random,
      keyEncryptionKey: Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url'),
    });
  const registration = { browserKey: 'browser-a', purpose: 'register' as const, boundTo: 'session-1' };
  const pending = { challenge: 'c-1', sub: 'u-1', userHandle: 'handle-1' };

  it('a registration’s is stored, used once, and only by the browser and session it was issued to', async () => {
    await store().issue(registration, pending);
    expect(await store().consume({ ...registration, browserKey: 'browser-b' })).toBeNull();
    expect(await store().consume({ ...registration, boundTo: 'session-2' })).toBeNull();
    expect(await store().consume({ ...registration, purpose: 'authenticate' })).toBeNull();
    expect(await store().consume(registration)).toEqual(pending);
    expect(await store().consume(registration)).toBeNull();
  });

  it('a registration started again replaces the earlier challenge; an old one expires', async () => {
    await store().issue(registration, pending);
    await store().issue(registration, { ...pending, challenge: 'c-2' });
    expect(await store().consume(registration)).toMatchObject({ challenge: 'c-2' });
    await store().issue(registration, pending);
    clock.advance(CHALLENGE_TTL_SECONDS);
    expect(await store().consume(registration)).toBeNull();
  });

  const signIn = { browserKey: 'browser-a', purpose: 'authenticate' as const, boundTo: 'interaction-1' };
  const challengeRows = async () =>
    (await database.handle.db.select({ n: sql<number>`count(*)::int` }).from(webauthnChallenges))[0]?.n;

  it('a sign-in’s is sealed, not stored: 36 bytes, a fresh one each time', async () => {
    const before = await challengeRows();
    const first = store().seal(signIn, null);
    const second = store().seal(signIn, null);
    expect(first).toHaveLength(36);
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(false);
    expect(await challengeRows()).toBe(before);
  });

  it('a sealed challenge is spent once, and only for the browser, interaction, purpose and user it was sealed for', async () => {
    const challenge = Buffer.from(store().seal(signIn, 'u-1')).toString('base64url');
    expect(await store().spendSealed({ ...signIn, browserKey: 'browser-b' }, 'u-1', challenge)).toBe(false);
    expect(await store().spendSealed({ ...signIn, boundTo: 'interaction-2' }, 'u-1', challenge)).toBe(false);
    expect(await store().spendSealed({ ...signIn, purpose: 'register' }, 'u-1', challenge)).toBe(false);
    expect(await store().spendSealed(signIn, null, challenge)).toBe(false);
    expect(await store().spendSealed(signIn, 'u-2', challenge)).toBe(false);
    expect(await store().spendSealed(signIn, 'u-1', challenge)).toBe(true);
    expect(await store().spendSealed(signIn, 'u-1', challenge)).toBe(false);
  });

  it('refuses a sealed challenge altered, forged with another key, unsealed or expired', async () => {
    const sealed = Buffer.from(store().seal(signIn, null));
    const altered = Buffer.from(sealed);
    altered[5] = (altered[5] ?? 0) ^ 1;
    expect(await store().spendSealed(signIn, null, altered.toString('base64url'))).toBe(false);
    const forger = createWebAuthnChallengeStore({
      db: database.handle.db,
      clock,
      random: app.protocol.random,
      keyEncryptionKey: new Uint8Array(32).fill(8),
    });
    const forged = Buffer.from(forger.seal(signIn, null)).toString('base64url');
    expect(await store().spendSealed(signIn, null, forged)).toBe(false);
    expect(await store().spendSealed(signIn, null, 'c-1')).toBe(false);
    expect(await store().spendSealed(signIn, null, `${sealed.toString('base64url')}A`)).toBe(false);
    clock.advance(CHALLENGE_TTL_SECONDS);
    expect(await store().spendSealed(signIn, null, sealed.toString('base64url'))).toBe(false);
  });
});

describe('login page: sign in with a passkey, no username', () => {
  it('the login page holds a one-click passkey button (secondary) with options for any discoverable credential', async () => {
    const browser = new TestBrowser(app);
    const login = await authorize(browser);
    const form = passkeyFormOf(login.body);
    expect(form.action).toMatch(/^\/interaction\/[^/]+\/passkey\?client_id=web$/);
    // A button, not a second form: the page's only form and hidden fields are the login form's.
    expect(login.body).toMatch(
      /<button type="button" class="secondary" data-sign-in="passkey"[^>]* hidden>Sign in with a passkey<\/button>/,
    );
    expect([...login.body.matchAll(/<form /g)]).toHaveLength(1);
    expect(Object.keys(hiddenFields(login.body))).toEqual(['csrf']);
    expect(login.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(login.body).not.toMatch(/<script>/);
    expect(login.body).toContain('/assets/simplewebauthn-browser.js');
    const options = ceremonyOptionsOf(login.body);
    expect(options).toMatchObject({ rpId: 'issuer.example.test', userVerification: 'preferred' });
    expect(options.allowCredentials ?? []).toEqual([]);
    // The passkey page itself still answers (its link from other pages, and after a failure).
    expect((await browser.get(form.action)).statusCode).toBe(200);
  });

  it('refuses a credential this server does not know, audited, and offers the passkey page again', async () => {
    const browser = new TestBrowser(app);
    const login = await authorize(browser);
    const form = passkeyFormOf(login.body);
    const credential = JSON.stringify({ id: 'unknown', rawId: 'unknown', type: 'public-key', response: {} });
    const refused = await browser.post(form.action, { ...form.fields, credential });
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toContain('could not be verified');
    expect(ceremonyOptionsOf(refused.body).challenge).not.toBe(ceremonyOptionsOf(login.body).challenge);
    expect(logs.events(AUDIT_EVENTS.loginFailed).at(-1)).toMatchObject({
      method: 'passkey',
      reason: 'unknown_credential',
      client_id: 'web',
    });
    expect(refused.cookies.find((cookie) => cookie.name.endsWith('op_session'))).toBeUndefined();
    expect(cookieOf(browser, 'op_session')).toBeUndefined();
  });

  it('signs in with a passkey from the button; the login page stored no challenge', async () => {
    const credential = createSoftwareCredential();
    await repository.add({ ...passkeyOf(KIM.sub, credential.id), publicKey: credential.publicKey });
    const rowsBefore = await challengeRowCount();
    const browser = new TestBrowser(app);
    const login = await authorize(browser);
    expect(await challengeRowCount()).toBe(rowsBefore);
    const form = passkeyFormOf(login.body);
    const answer = createAssertion(credential, ceremonyOptionsOf(login.body), ISSUER_ORIGIN, 1);
    const signedIn = await browser.post(form.action, { ...form.fields, credential: JSON.stringify(answer) });
    expect(signedIn.statusCode).toBe(303);
    expect(logs.events(AUDIT_EVENTS.loginSucceeded).at(-1)).toMatchObject({
      sub: KIM.sub,
      method: 'passkey',
      credential_id: credential.id,
    });
    expect(cookieOf(browser, 'op_session')).toBeDefined();
    // Only the answered challenge is written, as spent.
    expect(await challengeRowCount()).toBe(rowsBefore + 1);
  });

  it('a challenge answers once: spent by a refused signature, it does not sign in after', async () => {
    const credential = createSoftwareCredential();
    await repository.add({ ...passkeyOf(KIM.sub, credential.id), publicKey: credential.publicKey });
    const browser = new TestBrowser(app);
    const login = await authorize(browser);
    const form = passkeyFormOf(login.body);
    const options = ceremonyOptionsOf(login.body);
    const wrongKey = { ...createSoftwareCredential(), id: credential.id };
    const forged = createAssertion(wrongKey, options, ISSUER_ORIGIN, 1);
    const refused = await browser.post(form.action, { ...form.fields, credential: JSON.stringify(forged) });
    expect(refused.statusCode).toBe(401);
    expect(logs.events(AUDIT_EVENTS.loginFailed).at(-1)).toMatchObject({ reason: 'invalid' });
    const genuine = createAssertion(credential, options, ISSUER_ORIGIN, 1);
    const replayed = await browser.post(form.action, { ...form.fields, credential: JSON.stringify(genuine) });
    expect(replayed.statusCode).toBe(401);
    expect(logs.events(AUDIT_EVENTS.loginFailed).at(-1)).toMatchObject({ reason: 'malformed' });
    expect(cookieOf(browser, 'op_session')).toBeUndefined();
  });

  it('refuses an answer to another interaction’s challenge, even from the same browser', async () => {
    const credential = createSoftwareCredential();
    await repository.add({ ...passkeyOf(KIM.sub, credential.id), publicKey: credential.publicKey });
    const browser = new TestBrowser(app);
    const first = await authorize(browser);
    const second = await authorize(browser);
    const answer = createAssertion(credential, ceremonyOptionsOf(first.body), ISSUER_ORIGIN, 1);
    const form = passkeyFormOf(second.body);
    expect(form.action).not.toBe(passkeyFormOf(first.body).action);
    const refused = await browser.post(form.action, { ...form.fields, credential: JSON.stringify(answer) });
    expect(refused.statusCode).toBe(401);
    expect(logs.events(AUDIT_EVENTS.loginFailed).at(-1)).toMatchObject({ reason: 'malformed' });
  });

  it('needs the form’s CSRF token', async () => {
    const browser = new TestBrowser(app);
    const login = await authorize(browser);
    const response = await browser.post(passkeyFormOf(login.body).action, { credential: '{}' });
    expect(response.statusCode).toBe(403);
  });

  it('serves the WebAuthn browser library and the ceremony script as static scripts', async () => {
    for (const name of ['simplewebauthn-browser.js', 'passkey.js']) {
      const asset = await app.inject({ url: `/assets/${name}` });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    }
    expect((await app.inject({ url: '/assets/simplewebauthn-browser.js' })).body).toContain(
      'SimpleWebAuthnBrowser',
    );
  });
});

describe('passkey as the second factor', () => {
  it('a user whose only factor is a passkey is asked for it after the password', async () => {
    await repository.add(passkeyOf(PAT.sub, 'pat-key-1'));
    const browser = new TestBrowser(app);
    const afterPassword = await submitPassword(browser, await authorize(browser), PAT);
    expect(locationOf(afterPassword).pathname).toMatch(/\/otp$/);
    // No authenticator app: the code page hands over to the passkey page.
    const otp = await browser.get(afterPassword.headers.location as string);
    expect(locationOf(otp).pathname).toMatch(/\/passkey$/);
    const page = await browser.get(otp.headers.location as string);
    expect(page.body).toContain('Use your passkey');
    expect(ceremonyOptionsOf(page.body).allowCredentials.map((c: { id: string }) => c.id)).toEqual([
      'pat-key-1',
    ]);
    expect(page.body).toContain('data-link="recovery-code"');
  });

  it('refuses another user’s credential after the password (WebAuthn §7.2 step 6)', async () => {
    await repository.add(passkeyOf(CAROL.sub, 'carol-key-1'));
    const browser = new TestBrowser(app);
    const afterPassword = await submitPassword(browser, await authorize(browser), PAT);
    const page = await browser.follow(afterPassword);
    expect(new URL(browser.lastUrl, 'http://x').pathname).toMatch(/\/passkey$/);
    const credential = JSON.stringify({
      id: 'carol-key-1',
      rawId: 'carol-key-1',
      type: 'public-key',
      response: {},
    });
    const refused = await browser.post(browser.lastUrl, { ...hiddenFields(page.body), credential });
    expect(refused.statusCode).toBe(401);
    expect(logs.events(AUDIT_EVENTS.factorFailed).at(-1)).toMatchObject({
      sub: PAT.sub,
      method: 'passkey',
      reason: 'wrong_user',
      credential_id: 'carol-key-1',
    });
  });

  it('the otp page offers the passkey besides the code; acr_values phishing-resistant offers only the passkey', async () => {
    const browser = new TestBrowser(app);
    const afterPassword = await submitPassword(browser, await authorize(browser), CAROL);
    const otp = await browser.get(afterPassword.headers.location as string);
    expect(otp.statusCode).toBe(200);
    expect(otp.body).toContain('data-link="passkey"');

    const strict = new TestBrowser(app);
    const login = await authorize(strict, { acr_values: ACR_VALUES.phishingResistant });
    const stepped = await submitPassword(strict, login, CAROL);
    const otpUrl = stepped.headers.location as string;
    expect(locationOf(await strict.get(otpUrl)).pathname).toMatch(/\/passkey$/);
    // A code is not accepted either: it cannot reach the level.
    const code = TOTP.generate({
      secret: Secret.fromBase32(CAROL_TOTP),
      timestamp: clock.nowSeconds() * 1000,
    });
    const interactionId = otpUrl.split('/')[2]!;
    const csrf = csrfTokenFor(cookieOf(strict, 'op_browser')!, 'otp', interactionId);
    const posted = await strict.post(otpUrl, { csrf, otp: code });
    expect([posted.statusCode, locationOf(posted).pathname]).toEqual([
      303,
      expect.stringMatching(/\/passkey$/),
    ]);
    const passkeyPage = await strict.get(posted.headers.location as string);
    expect(passkeyPage.body).not.toContain('data-link="otp"');
    expect(passkeyPage.body).not.toContain('data-link="recovery-code"');
  });
});

describe('enrolment inside a sign-in', () => {
  it('a require_mfa client leads a user without a factor to the enrol page, which offers a passkey', async () => {
    const browser = new TestBrowser(app);
    const who = {
      sub: 'u-alice',
      username: ALICE.username,
      password: ALICE.password,
    } as unknown as typeof PAT;
    const afterPassword = await submitPassword(browser, await authorize(browser, {}, STRICT.clientId), who);
    const enrol = await browser.get(afterPassword.headers.location as string);
    expect(enrol.body).toContain('data-enrol="passkey"');
    const page = await browser.get(enrol.body.match(/href="([^"]+)" data-enrol="passkey"/)![1]!);
    expect(page.statusCode).toBe(200);
    expect(ceremonyOptionsOf(page.body).authenticatorSelection.residentKey).toBe('required');
  });

  it('acr_values phishing-resistant and no factor: the enrol page leads with the passkey', async () => {
    const browser = new TestBrowser(app);
    const who = {
      sub: 'u-alice',
      username: ALICE.username,
      password: ALICE.password,
    } as unknown as typeof PAT;
    const login = await authorize(browser, { acr_values: ACR_VALUES.phishingResistant });
    const enrol = await browser.get((await submitPassword(browser, login, who)).headers.location as string);
    expect(enrol.body).toContain('asks for a passkey');
    expect(enrol.body).toMatch(/class="button primary">Set up a passkey</);
  });
});

describe('account page passkeys', () => {
  async function signedInAccount() {
    const browser = new TestBrowser(app);
    const login = await browser.follow(await browser.get('/account'));
    const back = await browser.post(browser.lastUrl, {
      ...hiddenFields(login.body),
      username: ALICE.username,
      password: ALICE.password,
    });
    expect(locationOf(back).pathname).toBe('/account');
    return { browser, page: await browser.get('/account') };
  }

  it('adding needs the CSRF token and a recent authentication, then runs registration options', async () => {
    const { browser, page } = await signedInAccount();
    expect(page.body).toContain('id="passkeys-title"');
    expect((await browser.post('/account/passkeys', {})).statusCode).toBe(403);
    const csrf = hiddenFields(page.body).csrf!;
    const enrol = await browser.post('/account/passkeys', { csrf });
    expect(enrol.statusCode).toBe(200);
    const options = ceremonyOptionsOf(enrol.body);
    expect(options).toMatchObject({ rp: { id: 'issuer.example.test' }, user: { name: 'alice' } });
    // A forged or empty response adds nothing, and the challenge is spent.
    const refused = await browser.post('/account/passkeys/confirm', {
      ...hiddenFields(enrol.body),
      credential: '{}',
    });
    expect(refused.statusCode).toBe(400);
    expect(await repository.list(ALICE.sub)).toEqual([]);

    clock.advance(301);
    const stale = await browser.post('/account/passkeys', { csrf });
    expect(stale.statusCode).toBe(303);
    expect(locationOf(stale).pathname).toMatch(/\/login$/);
  });

  it('lists, renames (audited) and removes (recent authentication) the user’s passkeys', async () => {
    const { browser } = await signedInAccount();
    await repository.add(passkeyOf(ALICE.sub, 'alice-key-1'));
    // As if she had just used it: with a factor enrolled, the account page needs it.
    const used = JSON.stringify([{ method: 'passkey', at: clock.nowSeconds(), userVerified: true }]);
    await database.handle.db.execute(
      sql`update sso_sessions set methods = methods || ${used}::jsonb where sub = ${ALICE.sub}`,
    );
    const page = await browser.get('/account');
    expect(page.body).toContain('data-passkey="alice-key-1"');
    const csrf = hiddenFields(page.body).csrf!;
    const renamed = await browser.follow(
      await browser.post('/account/passkeys/alice-key-1/rename', { csrf, name: 'Work laptop' }),
    );
    expect(renamed.body).toContain('value="Work laptop"');
    expect(logs.events(AUDIT_EVENTS.factorRenamed).at(-1)).toMatchObject({
      sub: ALICE.sub,
      method: 'passkey',
      credential_id: 'alice-key-1',
    });
    // Someone else's passkey: not found (shown at the result address, after post/redirect/get).
    const foreign = await browser.post('/account/passkeys/pat-key-1/remove', { csrf });
    expect(foreign.statusCode).toBe(303);
    expect((await browser.follow(foreign)).body).toContain('That passkey was not found.');
    const removed = await browser.follow(
      await browser.post('/account/passkeys/alice-key-1/remove', { csrf }),
    );
    expect(removed.body).not.toContain('data-passkey="alice-key-1"');
    expect(removed.body).toContain('Passkey removed.');
    expect(logs.events(AUDIT_EVENTS.factorRemoved).at(-1)).toMatchObject({
      method: 'passkey',
      credential_id: 'alice-key-1',
    });
    // Removing changes how the account is entered: an old authentication is sent to sign in again.
    await repository.add(passkeyOf(ALICE.sub, 'alice-key-2'));
    clock.advance(301);
    const stale = await browser.post('/account/passkeys/alice-key-2/remove', { csrf });
    expect(locationOf(stale).pathname).toMatch(/\/(login|otp|passkey)$/);
    expect(await repository.find('alice-key-2')).not.toBeNull();
    expect(await repository.find('pat-key-1')).not.toBeNull();
  });
});

describe('users reset-mfa', () => {
  it('removes the user’s passkeys too', async () => {
    const admin = createUsersAdmin({
      db: database.handle.db,
      keyEncryptionKey: new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url')),
      clock,
      random: app.protocol.random,
      issuer: TEST_ISSUER,
      signOut: app.userSignOut,
    });
    expect((await admin.show('pat')).passkeys).toBe(1);
    expect(await admin.resetMfa('pat')).toMatchObject({ passkeys: 1 });
    expect(await repository.hasAny(PAT.sub)).toBe(false);
  });
});
