import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInSubjectReader } from '../src/accounts/drizzle/sign-in-subject.js';
import { consents, passkeyCredentials, recoveryCodes, totpCredentials, users } from '../src/db/schema.js';
import { createInteractionRepository } from '../src/interaction/interaction-repository.js';
import { createSsoSessionRepository } from '../src/interaction/sso-session-repository.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

// PGlite by default, a fresh PostgreSQL database when TEST_DATABASE_URL is set.
let testDatabase: TestDatabase;
let db: TestDatabase['handle']['db'];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  db = testDatabase.handle.db;
  for (const sub of ['none', 'app', 'unconfirmed', 'passkey', 'codes', 'used-codes', 'disabled']) {
    await db.insert(users).values({ sub, username: sub, passwordHash: 'x', updatedAt: 1 });
  }
  const totp = (id: string, sub: string, confirmedAt: number | null) => ({
    id,
    sub,
    name: id,
    secretEncrypted: 'x',
    createdAt: 1,
    confirmedAt,
  });
  await db.insert(totpCredentials).values([totp('t1', 'app', 2), totp('t2', 'unconfirmed', null)]);
  await db.insert(passkeyCredentials).values({
    id: 'p1',
    sub: 'passkey',
    userHandle: 'h',
    name: 'key',
    publicKey: 'k',
    counter: 0,
    deviceType: 'singleDevice',
    backedUp: false,
    aaguid: '0',
    createdAt: 1,
  });
  await db.insert(recoveryCodes).values([
    { sub: 'codes', codeHash: 'a', createdAt: 1, usedAt: 2 },
    { sub: 'codes', codeHash: 'b', createdAt: 1 },
    { sub: 'used-codes', codeHash: 'c', createdAt: 1, usedAt: 2 },
  ]);
  await db.update(users).set({ disabledAt: 5 }).where(eq(users.sub, 'disabled'));
});
afterAll(async () => {
  await testDatabase?.drop();
});

const enrolledOf = async (sub: string) => (await createSignInSubjectReader(db)(sub, 'web'))?.enrolled;

describe('sign-in subject: the user and their second factors in one read', () => {
  it('counts only this user’s confirmed apps, passkeys and unused recovery codes', async () => {
    const none = { otp: false, passkey: false, recoveryCodes: false };
    expect(await enrolledOf('none')).toEqual(none);
    expect(await enrolledOf('app')).toEqual({ ...none, otp: true });
    expect(await enrolledOf('unconfirmed')).toEqual(none);
    expect(await enrolledOf('passkey')).toEqual({ ...none, passkey: true });
    expect(await enrolledOf('codes')).toEqual({ ...none, recoveryCodes: true });
    expect(await enrolledOf('used-codes')).toEqual(none);
  });

  it('returns the user as findUserBySub does, and nobody for a disabled or unknown account', async () => {
    const read = createSignInSubjectReader(db);
    expect((await read('app', 'web'))?.user).toMatchObject({ sub: 'app', username: 'app' });
    expect(await read('disabled', 'web')).toBeNull();
    expect(await read('nobody', 'web')).toBeNull();
  });

  it('carries the scopes the user approved for that client, and none for another', async () => {
    await db.insert(consents).values([
      { sub: 'none', clientId: 'web', scopes: ['openid', 'email'], createdAt: 10, updatedAt: 10 },
      { sub: 'app', clientId: 'web', scopes: ['openid'], createdAt: 10, updatedAt: 10 },
    ]);
    const read = createSignInSubjectReader(db);
    expect((await read('none', 'web'))?.rememberedScopes).toEqual(['openid', 'email']);
    expect((await read('none', 'other'))?.rememberedScopes).toEqual([]);
    expect((await read('passkey', 'web'))?.rememberedScopes).toEqual([]);
  });
});

describe('sign-in subject: joined to the interaction by the interaction pages’ guard', () => {
  const at = 1_700_000_000;
  const interaction = (id: string, params: Record<string, string>) => ({
    id,
    browserHash: 'b',
    request: { params, resources: [] },
    loginSid: null,
    approvedScopes: null,
    createdAt: at,
    expiresAt: at + 600,
  });
  const session = (sub: string) => ({
    id: `sid-${sub}`,
    sub,
    authTime: at,
    methods: [{ method: 'password' as const, at }],
    createdAt: at,
    expiresAt: at + 60,
    userAgent: null,
    ip: null,
    lastUsedAt: at,
  });

  it('answers what the reader answers, for the session’s user and the stored client', async () => {
    const interactions = createInteractionRepository(db);
    const sessions = createSsoSessionRepository(db);
    const read = createSignInSubjectReader(db);
    await interactions.create(interaction('i-web', { client_id: 'web' }));
    for (const sub of [
      'none',
      'app',
      'unconfirmed',
      'passkey',
      'codes',
      'used-codes',
      'disabled',
      'nobody',
    ]) {
      await sessions.create(session(sub), `key-${sub}`);
      const found = await interactions.findActiveWithSession('i-web', `key-${sub}`, at);
      expect(found?.joinedSubject).toEqual({ sub, clientId: 'web', subject: await read(sub, 'web') });
    }
    // The consent is the stored client's: `none` approved openid and email for `web` above.
    const none = await interactions.findActiveWithSession('i-web', 'key-none', at);
    expect(none?.joinedSubject?.subject?.rememberedScopes).toEqual(['openid', 'email']);
  });

  it('joins nothing without a live session or without a client in the stored request', async () => {
    const interactions = createInteractionRepository(db);
    await interactions.create(interaction('i-device', {}));
    expect((await interactions.findActiveWithSession('i-device', 'key-app', at))?.joinedSubject).toBeNull();
    expect((await interactions.findActiveWithSession('i-web', null, at))?.joinedSubject).toBeNull();
    expect((await interactions.findActiveWithSession('i-web', 'key-app', at + 60))?.joinedSubject).toBeNull();
  });
});
