import { createHash } from 'node:crypto';
import { verifyPassword } from '@oidc-orders/oauth-core';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsersAdmin } from '../src/admin/users-admin.js';
import { users } from '../src/db/schema.js';
import { createTotpRepository } from '../src/mfa/totp-repository.js';
import type { SeedDocument, SeedUser } from '../src/schemas/seed.js';
import { startTestApp, TEST_ISSUER, TEST_KEY_ENCRYPTION_KEY, type TestApp } from './helpers/app.js';
import { databaseKind } from './helpers/database.js';
import { captureLogs } from './helpers/security.js';
import { testSeed } from './helpers/seed.js';

/**
 * The seed file and the operator's `users` commands do not undo each other at the next start: the
 * seed disables only the users it manages and no longer names, re-enables only those it disabled
 * itself, and writes a user's entry again only when the entry changed since it was applied. Every
 * start applies the seed through `reseed` (plugins/stores.ts), which these tests call. Runs on
 * PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */

let app: TestApp;
let close: () => Promise<void>;
let admin: ReturnType<typeof createUsersAdmin>;
const logs = captureLogs('info');
const keyEncryptionKey = new Uint8Array(Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64url'));

beforeAll(async () => {
  ({ app, close } = await startTestApp({ logger: logs.logger }));
  admin = createUsersAdmin({
    db: app.database.db,
    keyEncryptionKey,
    clock: app.protocol.clock,
    random: app.protocol.random,
    issuer: TEST_ISSUER,
    signOut: app.userSignOut,
  });
});
afterAll(() => close());

/** The test seed plus `extra` users (each test has its own, so the tests do not share state). */
function seedWith(...extra: SeedUser[]): SeedDocument {
  const seed = testSeed();
  return { ...seed, users: [...(seed.users ?? []), ...extra] };
}

const row = async (sub: string) => {
  const [found] = await app.database.db.select().from(users).where(eq(users.sub, sub));
  if (!found) throw new Error(`no user ${sub}`);
  return found;
};
const canSignIn = async (username: string) => (await app.stores.users.findUserByUsername(username)) !== null;

describe(`the seed and the operator's commands (${databaseKind})`, () => {
  it('a seed user an operator disabled stays disabled at the next start, even when its entry changes; after `users enable` the next start keeps it enabled', async () => {
    const carol: SeedUser = { sub: 'u-carol', username: 'carol', password: 'carol-password-for-tests' };
    await app.reseed(seedWith(carol));
    expect((await admin.disable('carol')).changed).toBe(true);
    expect(await row('u-carol')).toMatchObject({ disabledBy: 'operator', managedBy: 'seed' });

    await app.reseed(seedWith(carol));
    expect(await canSignIn('carol')).toBe(false);
    // A changed entry is written (the new name), and the operator's disable still stands.
    await app.reseed(seedWith({ ...carol, name: 'Carol Renamed' }));
    expect(await row('u-carol')).toMatchObject({ name: 'Carol Renamed', disabledBy: 'operator' });
    expect(await canSignIn('carol')).toBe(false);

    expect((await admin.enable('carol')).changed).toBe(true);
    await app.reseed(seedWith({ ...carol, name: 'Carol Renamed' }));
    expect(await canSignIn('carol')).toBe(true);
    expect(await row('u-carol')).toMatchObject({ disabledAt: null, disabledBy: null, managedBy: 'seed' });
  });

  it('a user added with `users add` is the operator’s: the next start, whose file does not name it, leaves it enabled', async () => {
    await admin.add({ username: 'dave', sub: 'u-dave', password: 'dave-passphrase-for-tests' });
    expect(await row('u-dave')).toMatchObject({ managedBy: 'operator', seedFingerprint: null });
    const before = logs.lines().length;

    await app.reseed(seedWith());
    expect(await canSignIn('dave')).toBe(true);
    expect(await row('u-dave')).toMatchObject({ disabledAt: null, managedBy: 'operator' });
    // `users show` tells the operator whose user it is.
    expect(await admin.show('dave')).toMatchObject({ managedBy: 'operator', disabled: false });
    expect(await admin.show('alice')).toMatchObject({ managedBy: 'seed' });
    // (Earlier tests' seed users, which this seed drops, may be named; the operator's user is not.)
    const disabledNow = logs
      .lines()
      .slice(before)
      .flatMap((line) => (String(line.msg).startsWith('seed: disabled') ? (line.users as string[]) : []));
    expect(disabledNow).not.toContain('u-dave');
  });

  it('a password reset with `users reset-password` outlives restarts until the file’s entry itself changes', async () => {
    const erin: SeedUser = { sub: 'u-erin', username: 'erin', password: 'erin-password-for-tests' };
    await app.reseed(seedWith(erin));
    await admin.resetPassword('erin', 'erin-new-passphrase-from-operator');

    await app.reseed(seedWith(erin));
    // The same entry with its members in another order is the same entry.
    await app.reseed(seedWith({ password: erin.password, username: 'erin', sub: 'u-erin' }));
    expect(
      await verifyPassword('erin-new-passphrase-from-operator', (await row('u-erin')).passwordHash),
    ).toBe(true);

    // The file's entry changed: the seed applies it, password included.
    await app.reseed(seedWith({ ...erin, email: 'erin@example.test' }));
    const changed = await row('u-erin');
    expect(changed.email).toBe('erin@example.test');
    expect(await verifyPassword('erin-password-for-tests', changed.passwordHash)).toBe(true);
  });

  it('records a keyed fingerprint of the applied entry, never the password or an unkeyed hash of it', async () => {
    const fay: SeedUser = { sub: 'u-fay', username: 'fay', password: 'fay-password-for-tests' };
    await app.reseed(seedWith(fay));
    const { seedFingerprint } = await row('u-fay');
    expect(seedFingerprint).toMatch(/^hmac-sha256\$[A-Za-z0-9_-]{43}$/);
    expect(seedFingerprint).not.toContain(fay.password);
    const unkeyed = createHash('sha256').update(JSON.stringify(fay)).digest('base64url');
    expect(seedFingerprint).not.toContain(unkeyed);
  });

  it('a row the seed never fingerprinted (written before the fingerprint existed) gets its entry applied once', async () => {
    const gus: SeedUser = { sub: 'u-gus', username: 'gus', password: 'gus-password-for-tests' };
    await app.reseed(seedWith(gus));
    await admin.resetPassword('gus', 'gus-new-passphrase-from-operator');
    await app.database.db.update(users).set({ seedFingerprint: null }).where(eq(users.sub, 'u-gus'));

    await app.reseed(seedWith(gus));
    expect(await verifyPassword('gus-password-for-tests', (await row('u-gus')).passwordHash)).toBe(true);
    expect((await row('u-gus')).seedFingerprint).not.toBeNull();
  });

  it('an authenticator app removed with `users reset-mfa` is not restored from the unchanged entry’s totp_secret', async () => {
    const hal: SeedUser = {
      sub: 'u-hal',
      username: 'hal',
      password: 'hal-password-for-tests',
      totp_secret: 'JBSWY3DPEHPK3PXP',
    };
    const totp = createTotpRepository({
      db: app.database.db,
      keyEncryptionKey,
      clock: app.protocol.clock,
      random: app.protocol.random,
      issuer: TEST_ISSUER,
    });
    await app.reseed(seedWith(hal));
    expect(await totp.list('u-hal')).toHaveLength(1);
    await admin.resetMfa('hal');

    await app.reseed(seedWith(hal));
    expect(await totp.list('u-hal')).toHaveLength(0);
  });

  it('a seed user the file drops is disabled by the seed and enabled again when named; `users enable` in between hands it to the operator until the file names it again', async () => {
    const ivy: SeedUser = { sub: 'u-ivy', username: 'ivy', password: 'ivy-password-for-tests' };
    await app.reseed(seedWith(ivy));
    await app.reseed(seedWith());
    expect(await row('u-ivy')).toMatchObject({ disabledBy: 'seed', managedBy: 'seed' });
    await app.reseed(seedWith(ivy));
    expect(await canSignIn('ivy')).toBe(true);

    await app.reseed(seedWith());
    expect((await admin.enable('ivy')).changed).toBe(true);
    expect(await row('u-ivy')).toMatchObject({ disabledAt: null, managedBy: 'operator' });
    await app.reseed(seedWith());
    expect(await canSignIn('ivy')).toBe(true);

    await app.reseed(seedWith(ivy));
    expect(await row('u-ivy')).toMatchObject({ managedBy: 'seed' });
    await app.reseed(seedWith());
    expect(await canSignIn('ivy')).toBe(false);
  });

  it('a user disabled before `disabled_by` was recorded is not re-enabled by the seed (it may be an operator’s)', async () => {
    const jon: SeedUser = { sub: 'u-jon', username: 'jon', password: 'jon-password-for-tests' };
    await app.reseed(seedWith(jon));
    await app.database.db
      .update(users)
      .set({ disabledAt: 1_700_000_000, disabledBy: null })
      .where(eq(users.sub, 'u-jon'));

    await app.reseed(seedWith(jon));
    expect(await canSignIn('jon')).toBe(false);
  });
});
