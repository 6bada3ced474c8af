import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDrizzleAccountStore } from '../src/accounts/drizzle-account-store.js';
import { createUsersAdmin, NoLocalPasswordError, UserNotFoundError } from '../src/admin/users-admin.js';
import { users } from '../src/db/schema.js';
import { createTotpRepository } from '../src/mfa/totp-repository.js';
import {
  basicAuthorization,
  FORM,
  form,
  startTestApp,
  TEST_ISSUER,
  TEST_KEY_ENCRYPTION_KEY,
  type TestApp,
} from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { TEST_SECRETS } from './helpers/seed.js';

/**
 * The `users` admin commands work on the database a running server uses: what they change, the
 * server sees on the next request, without a restart. (The command-line wrapper, src/cli/users.ts,
 * only parses arguments and prints; it runs these same functions. test/users-cli.test.ts runs it
 * as a separate process on a running server's PostgreSQL database.)
 */
let app: TestApp;
let database: TestDatabase;
let close: () => Promise<void>;
let admin: ReturnType<typeof createUsersAdmin>;

beforeAll(async () => {
  ({ app, database, close } = await startTestApp());
  admin = createUsersAdmin({
    db: database.handle.db,
    keyEncryptionKey: new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url')),
    clock: app.protocol.clock,
    random: app.protocol.random,
    issuer: TEST_ISSUER,
    signOut: app.userSignOut,
  });
});
afterAll(() => close());

const introspect = async (token: string) =>
  (
    await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: {
        ...FORM,
        authorization: basicAuthorization('https://api.example.test/reports', TEST_SECRETS.reportsApi),
      },
      payload: form({ token }),
    })
  ).json();

describe('users admin', () => {
  it('adds a user who can then sign in, and lists and shows users', async () => {
    const added = await admin.add({
      username: 'zoe',
      sub: 'u-zoe',
      password: 'zoe-passphrase-1234',
      name: 'Zoe',
    });
    expect(added).toMatchObject({ sub: 'u-zoe', username: 'zoe', authenticatorApps: 0 });
    expect(await app.protocol.stores.users.findUserByUsername('zoe')).toMatchObject({ sub: 'u-zoe' });
    expect((await admin.list()).map((user) => user.username)).toEqual(['alice', 'zoe']);
    await expect(admin.show('nobody')).rejects.toBeInstanceOf(UserNotFoundError);
  });

  it('reset-password ends a live refresh token and an opaque access token at once', async () => {
    const tokens = await webClientTokens(app, 'openid offline_access reports.read');
    expect((await introspect(tokens.access_token as string)).active).toBe(true);

    const result = await admin.resetPassword('alice', 'a-new-passphrase-for-alice');
    expect(result.grants).toBeGreaterThanOrEqual(1);

    const refresh = await refreshWithWebClient(app, tokens.refresh_token as string);
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    expect(await introspect(tokens.access_token as string)).toEqual({ active: false });
  });

  it('disable stops a live refresh token and an opaque access token at once; enable lets the user in again', async () => {
    await admin.resetPassword('alice', TEST_SECRETS.alicePassword);
    const tokens = await webClientTokens(app, 'openid offline_access reports.read');
    expect((await introspect(tokens.access_token as string)).active).toBe(true);

    expect(await admin.disable('alice')).toMatchObject({ changed: true });
    const refresh = await refreshWithWebClient(app, tokens.refresh_token as string);
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    expect(await introspect(tokens.access_token as string)).toEqual({ active: false });
    expect(await app.protocol.stores.users.findUserByUsername('alice')).toBeNull();
    expect((await admin.show('alice')).disabled).toBe(true);

    expect(await admin.enable('alice')).toMatchObject({ changed: true });
    expect(await app.protocol.stores.users.findUserByUsername('alice')).toMatchObject({ sub: 'u-alice' });
  });

  it('reset-mfa removes the authenticator apps and recovery codes, and ends the tokens', async () => {
    const totp = createTotpRepository({
      db: database.handle.db,
      keyEncryptionKey: new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url')),
      clock: app.protocol.clock,
      random: app.protocol.random,
      issuer: TEST_ISSUER,
    });
    const enrolment = await totp.startEnrolment('u-alice', 'alice', 'Phone');
    const { TOTP, Secret } = await import('otpauth');
    const code = TOTP.generate({ secret: Secret.fromBase32(enrolment.secret), timestamp: Date.now() });
    expect(await totp.confirm(enrolment.id, 'u-alice', code)).toBe(true);
    expect((await admin.show('alice')).authenticatorApps).toBe(1);
    const tokens = await webClientTokens(app, 'openid offline_access reports.read');
    expect(await admin.resetMfa('alice')).toMatchObject({ authenticatorApps: 1, grants: 1 });
    // The sessions and tokens the lost factor may have helped to obtain end with it.
    expect(await introspect(tokens.access_token as string)).toEqual({ active: false });
    expect((await refreshWithWebClient(app, tokens.refresh_token as string)).json().error).toBe(
      'invalid_grant',
    );
    expect((await admin.show('alice')).authenticatorApps).toBe(0);
    expect(await totp.hasConfirmed('u-alice')).toBe(false);
  });
});

describe('users admin and the kind of an account', () => {
  it('reset-password refuses a federated account (it has no password here) and leaves its placeholder', async () => {
    const sub = await createDrizzleAccountStore(database.handle.db).signInFederated(
      'idp:corp',
      'admin-test-subject',
      { name: 'Fed Person', email: null, emailVerified: false, groups: null },
      1_800_000_000,
    );
    await expect(
      admin.resetPassword('idp:corp:admin-test-subject', 'Local-password-123'),
    ).rejects.toBeInstanceOf(NoLocalPasswordError);
    expect((await admin.show('idp:corp:admin-test-subject')).managedBy).toBe('federation');
    const [row] = await database.handle.db.select().from(users).where(eq(users.sub, sub));
    expect(row?.passwordHash).not.toMatch(/^scrypt\$/);
  });
});
