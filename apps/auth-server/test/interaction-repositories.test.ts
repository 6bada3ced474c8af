import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consents as consentsTable } from '../src/db/schema.js';
import { createConsentRepository } from '../src/interaction/consent-repository.js';
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
  const interaction = (id: string): Interaction => ({
    id,
    browserHash: 'browser-1',
    request: { params: { client_id: 'c', state: 'x' }, resources: ['https://api'] },
    loginSid: null,
    approvedScopes: null,
    createdAt: now,
    expiresAt: now + 600,
  });

  it('stores the request JSON and records the login', async () => {
    const interactions = createInteractionRepository(database.db);
    await interactions.create(interaction('i-1'));
    await interactions.recordLogin('i-1', 'sid-1');
    expect(await interactions.findActiveWithSession('i-1', null, now)).toEqual({
      interaction: { ...interaction('i-1'), loginSid: 'sid-1' },
      session: null,
    });
    expect(await interactions.findActiveWithSession('i-1', null, now + 600)).toBeNull();
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
    const session = {
      id: 'sid-joined',
      sub: 'u-1',
      authTime: now,
      methods: [{ method: 'password' as const, at: now }],
      createdAt: now,
      expiresAt: now + 60,
      userAgent: null,
      ip: null,
      lastUsedAt: now,
    };
    await sessions.create(session, 'hash-joined');
    await sessions.create({ ...session, id: 'sid-other' }, 'hash-other');
    expect(await interactions.findActiveWithSession('i-with-session', 'hash-joined', now)).toEqual({
      interaction: interaction('i-with-session'),
      session,
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

describe('consent repository', () => {
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

  it('remembers the union of approvals per user and client', async () => {
    const consents = createConsentRepository(database.db);
    expect(await consents.findApprovedScopes('u-1', 'client-a')).toEqual([]);
    await consents.remember('u-1', 'client-a', ['openid', 'profile'], now);
    await consents.remember('u-1', 'client-a', ['openid', 'email'], now + 1);
    expect((await consents.findApprovedScopes('u-1', 'client-a')).sort()).toEqual([
      'email',
      'openid',
      'profile',
    ]);
    expect(await consents.findApprovedScopes('u-1', 'client-b')).toEqual([]);
    // Approving what is already remembered (prompt=consent asks every time) writes no new row version.
    const before = await consentRow('u-1', 'client-a');
    await consents.remember('u-1', 'client-a', ['email', 'openid'], now + 2);
    expect(await consentRow('u-1', 'client-a')).toEqual(before);
    await consents.remember('u-1', 'client-a', ['openid', 'phone'], now + 3);
    expect(await consentRow('u-1', 'client-a')).toMatchObject({
      scopes: ['email', 'openid', 'phone', 'profile'],
      updatedAt: now + 3,
    });
    await consents.forget('u-1', 'client-a');
    expect(await consents.findApprovedScopes('u-1', 'client-a')).toEqual([]);
  });
});
