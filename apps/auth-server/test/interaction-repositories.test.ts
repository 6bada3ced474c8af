import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consents as consentsTable } from '../src/db/schema.js';
import { createInteractionRepository, type Interaction } from '../src/interaction/interaction-repository.js';
import { createSsoSessionRepository } from '../src/interaction/sso-session-repository.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

// PGlite by default, a fresh PostgreSQL database when TEST_DATABASE_URL is set.
let testDatabase: TestDatabase;
let database: TestDatabase['handle'];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = testDatabase.handle;
});
afterAll(async () => {
  await testDatabase?.drop();
});

const now = 1_700_000_000;

describe('SSO session repository', () => {
  it('finds a session by key hash until it expires, renews it under a new key, deletes it once', async () => {
    const sessions = createSsoSessionRepository(database.db);
    const password = { method: 'password' as const, at: now };
    const session = {
      id: 'sid-a',
      sub: 'u-1',
      authTime: now,
      methods: [password],
      createdAt: now,
      expiresAt: now + 60,
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
      ip: '203.0.113.7',
      lastUsedAt: now,
    };
    await sessions.create(session, 'hash-a');
    expect(await sessions.findActive('hash-a', now + 59)).toEqual(session);
    expect(await sessions.findActive('hash-a', now + 60)).toBeNull();
    expect(await sessions.findActive('other', now)).toBeNull();
    const origin = { userAgent: 'curl/8.5.0', ip: '2001:db8::1' };
    await sessions.renew('sid-a', 'hash-a2', now + 10, now + 70, [password], origin);
    expect(await sessions.findActive('hash-a', now + 10)).toBeNull();
    expect(await sessions.findActive('hash-a2', now + 69)).toEqual({
      ...session,
      ...origin,
      authTime: now + 10,
      expiresAt: now + 70,
      lastUsedAt: now + 10,
    });
    await sessions.touch('sid-a', now + 15);
    expect(await sessions.findActive('hash-a2', now + 15)).toMatchObject({ lastUsedAt: now + 15 });
    const otp = { method: 'otp' as const, at: now + 20 };
    await sessions.recordMethods('sid-a', 'hash-a3', [password, otp], now + 20);
    expect(await sessions.findActive('hash-a2', now + 20)).toBeNull();
    expect(await sessions.findActive('hash-a3', now + 20)).toMatchObject({
      methods: [password, otp],
      authTime: now + 20,
    });
    expect(await sessions.delete('sid-a')).toEqual({
      ...session,
      ...origin,
      methods: [password, otp],
      authTime: now + 20,
      expiresAt: now + 70,
      lastUsedAt: now + 15,
    });
    expect(await sessions.delete('sid-a')).toBeNull();
  });
});

describe('interaction repository', () => {
  /** A session of `u-1` signed in with a password at `now`, for a minute. */
  const passwordSession = (id: string) => ({
    id,
    sub: 'u-1',
    authTime: now,
    methods: [{ method: 'password' as const, at: now }],
    createdAt: now,
    expiresAt: now + 60,
    userAgent: null,
    ip: null,
    lastUsedAt: now,
  });
  const interaction = (id: string): Interaction => ({
    id,
    browserHash: 'browser-1',
    request: { params: { client_id: 'c', state: 'x' }, resources: ['https://api'] },
    loginSid: null,
    approvedScopes: null,
    createdAt: now,
    expiresAt: now + 600,
  });

  it('stores the request JSON; a session started or renewed for it is recorded as its login', async () => {
    const interactions = createInteractionRepository(database.db);
    const sessions = createSsoSessionRepository(database.db);
    await interactions.create(interaction('i-1'));
    await interactions.create(interaction('i-untouched'));
    const session = passwordSession('sid-1');
    await sessions.create(session, 'hash-login-1', 'i-1');
    expect(await interactions.findActiveWithSession('i-1', null, now)).toEqual({
      interaction: { ...interaction('i-1'), loginSid: 'sid-1' },
      session: null,
      joinedSubject: null,
    });
    expect(await sessions.findActive('hash-login-1', now)).toEqual(session);
    expect(await interactions.findActiveWithSession('i-1', null, now + 600)).toBeNull();
    // prompt=login in a second interaction: the same session renewed, recorded on that one alone.
    await interactions.create(interaction('i-again'));
    const origin = { userAgent: 'curl/8.5.0', ip: null };
    await sessions.renew('sid-1', 'hash-login-2', now + 5, now + 65, session.methods, origin, 'i-again');
    expect((await interactions.findActiveWithSession('i-again', null, now))?.interaction.loginSid).toBe(
      'sid-1',
    );
    expect(
      (await interactions.findActiveWithSession('i-untouched', null, now))?.interaction.loginSid,
    ).toBeNull();
    expect(await sessions.findActive('hash-login-2', now)).toMatchObject({ id: 'sid-1', authTime: now + 5 });
    // A session that could not be stored records no login.
    await expect(sessions.create(session, 'hash-login-3', 'i-untouched')).rejects.toThrow();
    expect(
      (await interactions.findActiveWithSession('i-untouched', null, now))?.interaction.loginSid,
    ).toBeNull();
  });

  it('keeps the device code an interaction approves, and none for an /authorize one', async () => {
    const interactions = createInteractionRepository(database.db);
    const device = {
      ...interaction('i-device'),
      request: { params: {}, resources: [] },
      deviceCodeHash: 'dch',
    };
    await interactions.create(device);
    expect((await interactions.findActiveWithSession('i-device', null, now))?.interaction).toEqual(device);
    await interactions.create(interaction('i-plain'));
    expect((await interactions.findActiveWithSession('i-plain', null, now))?.interaction).not.toHaveProperty(
      'deviceCodeHash',
    );
  });

  it('reads the live SSO session of the cookie with the interaction, and only that one', async () => {
    const interactions = createInteractionRepository(database.db);
    const sessions = createSsoSessionRepository(database.db);
    await interactions.create(interaction('i-with-session'));
    const session = passwordSession('sid-joined');
    await sessions.create(session, 'hash-joined');
    await sessions.create({ ...session, id: 'sid-other' }, 'hash-other');
    expect(await interactions.findActiveWithSession('i-with-session', 'hash-joined', now)).toEqual({
      interaction: interaction('i-with-session'),
      session,
      // No account `u-1` here (test/sign-in-subject.test.ts reads real ones).
      joinedSubject: { sub: 'u-1', clientId: 'c', subject: null },
    });
    // Expired, unknown or absent cookie: the interaction alone.
    for (const [keyHash, at] of [
      ['hash-joined', now + 60],
      ['hash-unknown', now],
      [null, now],
    ] as const) {
      expect(await interactions.findActiveWithSession('i-with-session', keyHash, at)).toEqual({
        interaction: interaction('i-with-session'),
        session: null,
        joinedSubject: null,
      });
    }
    // No interaction, no answer, whatever the session.
    expect(await interactions.findActiveWithSession('i-none', 'hash-joined', now)).toBeNull();
  });

  it('is consumed exactly once, only by the browser that started it, only before it expires', async () => {
    const interactions = createInteractionRepository(database.db);
    await interactions.create(interaction('i-2'));
    expect(await interactions.consume('i-2', 'browser-2', now)).toBeNull();
    expect(await interactions.consume('i-2', 'browser-1', now + 600)).toBeNull();
    const results = await Promise.all([
      interactions.consume('i-2', 'browser-1', now),
      interactions.consume('i-2', 'browser-1', now),
    ]);
    expect(results.filter((result) => result !== null)).toHaveLength(1);
  });
});

describe('consent remembered by the consuming approval', () => {
  /** The row with its `xmin`: a new row version (an UPDATE) changes it. */
  const consentRow = async (sub: string, clientId: string) =>
    (
      await database.db
        .select({
          version: sql<string>`xmin::text`,
          scopes: consentsTable.scopes,
          updatedAt: consentsTable.updatedAt,
        })
        .from(consentsTable)
        .where(and(eq(consentsTable.sub, sub), eq(consentsTable.clientId, clientId)))
    )[0];

  let approvals = 0;
  /** Allow on a fresh interaction of `browser-1`, approving `scopes` for `clientId` at `at`. */
  const approve = async (clientId: string, scopes: string[], at: number) => {
    const interactions = createInteractionRepository(database.db);
    const id = `i-approve-${++approvals}`;
    await interactions.create({
      id,
      browserHash: 'browser-1',
      request: { params: { client_id: clientId }, resources: [] },
      loginSid: null,
      approvedScopes: null,
      createdAt: at,
      expiresAt: at + 600,
    });
    return {
      id,
      consumed: await interactions.consume(id, 'browser-1', at, { sub: 'u-1', clientId, scopes }),
    };
  };

  it('remembers the union of approvals per user and client', async () => {
    expect(await consentRow('u-1', 'client-a')).toBeUndefined();
    expect((await approve('client-a', ['openid', 'profile'], now)).consumed?.id).toBe('i-approve-1');
    await approve('client-a', ['openid', 'email'], now + 1);
    expect((await consentRow('u-1', 'client-a'))?.scopes).toEqual(['email', 'openid', 'profile']);
    expect(await consentRow('u-1', 'client-b')).toBeUndefined();
    // Approving what is already remembered (prompt=consent asks every time) writes no new row version.
    const before = await consentRow('u-1', 'client-a');
    await approve('client-a', ['email', 'openid'], now + 2);
    expect(await consentRow('u-1', 'client-a')).toEqual(before);
    await approve('client-a', ['openid', 'phone'], now + 3);
    expect(await consentRow('u-1', 'client-a')).toMatchObject({
      scopes: ['email', 'openid', 'phone', 'profile'],
      updatedAt: now + 3,
    });
  });

  it('writes nothing when the interaction was not there to consume', async () => {
    const interactions = createInteractionRepository(database.db);
    const { id } = await approve('client-c', ['openid'], now);
    // A second submission (double click, another instance), another browser, or too late.
    for (const [browserHash, at] of [
      ['browser-1', now],
      ['browser-2', now],
    ] as const) {
      const again = { sub: 'u-1', clientId: 'client-c', scopes: ['openid', 'email'] };
      expect(await interactions.consume(id, browserHash, at, again)).toBeNull();
    }
    const interactionsLate = createInteractionRepository(database.db);
    await interactionsLate.create({
      id: 'i-late',
      browserHash: 'browser-1',
      request: { params: { client_id: 'client-c' }, resources: [] },
      loginSid: null,
      approvedScopes: null,
      createdAt: now,
      expiresAt: now + 600,
    });
    const late = { sub: 'u-1', clientId: 'client-c', scopes: ['phone'] };
    expect(await interactionsLate.consume('i-late', 'browser-1', now + 600, late)).toBeNull();
    expect((await consentRow('u-1', 'client-c'))?.scopes).toEqual(['openid']);
  });
});
