import { createServer, type Server, type Socket } from 'node:net';
import { describeWithSlapd, type SlapdFixture, startSlapd } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DirectoryConfig, parseDirectoryConfig } from '../src/directory/config.js';
import { createLdapDirectory } from '../src/directory/ldap-directory.js';
import type { Directory } from '../src/directory/types.js';

/** The LDAP side of directory users against a real OpenLDAP (the service kit's testing/slapd.ts). */

const warnings: string[] = [];
const log = {
  warn: (fields: Record<string, unknown>, message: string) =>
    warnings.push(`${message} ${JSON.stringify(fields)}`),
};

function configOf(env: Record<string, string>): DirectoryConfig {
  const { config, problems } = parseDirectoryConfig(env);
  if (config === null) throw new Error(problems.join('\n'));
  return config;
}

describe.runIf(describeWithSlapd())('a directory user against slapd', () => {
  let slapd: SlapdFixture;
  let directory: Directory;
  let annDn: string;

  beforeAll(async () => {
    slapd = await startSlapd();
    annDn = await slapd.addPerson({
      uid: 'ann',
      password: 'ann-directory-pw',
      cn: 'Ann Archer',
      mail: 'ann@example.test',
      krbPrincipalName: 'ann@OIDC.TEST',
    });
    await slapd.addPerson({ uid: 'bob', password: 'bob-directory-pw' });
    const staff = await slapd.addGroup('staff', [annDn]);
    await slapd.addGroup('everyone', [staff]);
    await slapd.addGroup('admins', [annDn], `ou=elsewhere,dc=example,dc=test`);
    directory = createLdapDirectory(configOf(slapd.env({ LDAP_EMAIL_VERIFIED: 'true' })), log);
  }, 60_000);
  afterAll(async () => {
    await slapd?.close();
  });

  it('signs in with the directory password: name, e-mail, groups by DN (nested, not same-name elsewhere)', async () => {
    const outcome = await directory.authenticate('ann', 'ann-directory-pw');
    expect(outcome).toEqual({
      kind: 'ok',
      entry: {
        stableId: await slapd.entryUuid('ann'),
        dn: annDn,
        username: 'ann',
        name: 'Ann Archer',
        email: 'ann@example.test',
        emailVerified: true,
        groups: ['everyone', 'staff'],
        kerberosPrincipal: 'ann@OIDC.TEST',
      },
    });
  });

  it('a wrong password, an unknown user and an empty password are the same refusal (a found entry named, for its lock)', async () => {
    const ann = await directory.lookupByUsername('ann');
    expect(await directory.authenticate('ann', 'wrong')).toEqual({
      kind: 'invalid_credentials',
      stableId: (ann as { stableId: string }).stableId,
    });
    expect(await directory.authenticate('nobody', 'ann-directory-pw')).toEqual({
      kind: 'invalid_credentials',
    });
    expect(await directory.authenticate('ann', '')).toEqual({ kind: 'invalid_credentials' });
  });

  it.each(['*', 'a*', '*)(uid=*', 'ann)(|(uid=*', 'ann\u0000', 'ann\\', '*)(objectClass=*'])(
    'the username %j matches no other entry',
    async (username) => {
      expect(await directory.authenticate(username, 'ann-directory-pw')).toEqual({
        kind: 'invalid_credentials',
      });
      expect(await directory.lookupByUsername(username)).toBeNull();
    },
  );

  it('a username that matches two entries signs in neither', async () => {
    const byMail = createLdapDirectory(
      configOf(slapd.env({ LDAP_USER_FILTER: '(|(uid={username})(mail={username}))' })),
      log,
    );
    await slapd.addPerson({ uid: 'kim', password: 'shared-pw', mail: 'desk@example.test' });
    await slapd.addPerson({ uid: 'kai', password: 'shared-pw', mail: 'desk@example.test' });
    expect(await byMail.authenticate('desk@example.test', 'shared-pw')).toEqual({
      kind: 'invalid_credentials',
    });
    expect(await byMail.lookupByUsername('desk@example.test')).toBeNull();
    expect(await byMail.authenticate('ann@example.test', 'ann-directory-pw')).toMatchObject({
      kind: 'ok',
      entry: { username: 'ann' },
    });
    await slapd.deletePerson('kim');
    await slapd.deletePerson('kai');
  });

  it('looks users up by stable id, by Kerberos principal and lists them', async () => {
    const stableId = await slapd.entryUuid('ann');
    expect(await directory.lookupByStableId(stableId)).toMatchObject({ username: 'ann' });
    expect(await directory.lookupByKerberosPrincipal('ann@OIDC.TEST')).toMatchObject({ stableId });
    expect(await directory.lookupByKerberosPrincipal('ANN@OIDC.TEST')).toBeNull();
    const listed = await directory.list(10);
    expect(listed === 'unavailable' ? [] : listed.map((entry) => entry.username).sort()).toEqual([
      'ann',
      'bob',
    ]);
  });

  it('keeps the stable id across a rename; a deleted and re-created account is a new person', async () => {
    await slapd.addPerson({ uid: 'carol', password: 'carol-pw-1' });
    const before = await slapd.entryUuid('carol');
    await slapd.renamePerson('carol', 'caroline');
    const renamed = await directory.authenticate('caroline', 'carol-pw-1');
    expect(renamed).toMatchObject({ kind: 'ok', entry: { stableId: before, username: 'caroline' } });
    await slapd.deletePerson('caroline');
    expect(await directory.lookupByStableId(before)).toBeNull();
    await slapd.addPerson({ uid: 'caroline', password: 'carol-pw-1' });
    const recreated = await directory.authenticate('caroline', 'carol-pw-1');
    expect(recreated.kind === 'ok' && recreated.entry.stableId).not.toBe(before);
  });

  it('an entry outside LDAP_ENABLED_FILTER is disabled, told only after the right password', async () => {
    const disabled = createLdapDirectory(configOf(slapd.env({ LDAP_ENABLED_FILTER: '(mail=*)' })), log);
    expect(await disabled.authenticate('bob', 'wrong')).toMatchObject({ kind: 'invalid_credentials' });
    expect(await disabled.authenticate('bob', 'bob-directory-pw')).toEqual({ kind: 'account_disabled' });
    expect(await disabled.lookupByUsername('bob')).toBeNull();
    expect(await disabled.lookupByUsername('ann')).toMatchObject({ username: 'ann' });
  });

  describe('the password policy (ppolicy overlay)', () => {
    it('a password reset by an administrator must be changed, then the new one signs in', async () => {
      await slapd.addPerson({ uid: 'dave', password: 'dave-old-pw' });
      await slapd.requirePasswordChange('dave');
      expect(await directory.authenticate('dave', 'dave-old-pw')).toEqual({
        kind: 'must_change_password',
        canChange: true,
      });
      expect(await directory.changePassword('dave', 'not-it', 'dave-new-pw')).toEqual({
        kind: 'refused',
        reason: 'invalid_credentials',
      });
      expect(await directory.changePassword('dave', 'dave-old-pw', 'dave-new-pw')).toEqual({
        kind: 'changed',
      });
      // RFC 3062: the server hashed it (a plain modify would have stored the clear text).
      expect(await slapd.storedPassword('dave')).toMatch(/^\{SSHA\}/);
      expect(await directory.authenticate('dave', 'dave-new-pw')).toMatchObject({ kind: 'ok' });
    });

    it("a new password the directory's quality rules refuse is refused with their reason", async () => {
      const policyDn = await slapd.addPolicy('twelve-characters', {
        pwdMinLength: '12',
        pwdCheckQuality: '2',
      });
      await slapd.addPerson({ uid: 'jack', password: 'jack-old-password', policyDn });
      expect(await directory.changePassword('jack', 'jack-old-password', 'short')).toEqual({
        kind: 'refused',
        reason: 'policy',
        message: 'The new password is too short for the directory.',
      });
      expect(await directory.authenticate('jack', 'jack-old-password')).toMatchObject({ kind: 'ok' });
    });

    it('an expired password with no grace logins left is expired, not a wrong password', async () => {
      const policyDn = await slapd.addPolicy('expire-at-once', { pwdMaxAge: '1' });
      await slapd.addPerson({ uid: 'gina', password: 'gina-pw', policyDn });
      await new Promise((resolve) => setTimeout(resolve, 2100));
      // Without grace logins the directory lets nobody bind, so no change with the old password.
      expect(await directory.authenticate('gina', 'gina-pw')).toEqual({
        kind: 'password_expired',
        canChange: false,
      });
      expect(await directory.authenticate('gina', 'wrong')).toMatchObject({ kind: 'invalid_credentials' });
    });

    it('grace logins after expiry are counted down, and one of them can change the password', async () => {
      const policyDn = await slapd.addPolicy('two-grace-logins', {
        pwdMaxAge: '1',
        pwdGraceAuthNLimit: '2',
      });
      await slapd.addPerson({ uid: 'hank', password: 'hank-old-pw', policyDn });
      await new Promise((resolve) => setTimeout(resolve, 2100));
      expect(await directory.authenticate('hank', 'hank-old-pw')).toMatchObject({
        kind: 'ok',
        graceLoginsLeft: 1,
      });
      expect(await directory.changePassword('hank', 'hank-old-pw', 'hank-new-pw')).toEqual({
        kind: 'changed',
      });
      const fresh = await directory.authenticate('hank', 'hank-new-pw');
      expect(fresh).toMatchObject({ kind: 'ok' });
      expect(fresh).not.toHaveProperty('graceLoginsLeft');
    });

    it('warns of a password about to expire', async () => {
      const policyDn = await slapd.addPolicy('warn-an-hour-before', {
        pwdMaxAge: '3600',
        pwdExpireWarning: '7200', // more than pwdMaxAge: the warning comes from the first bind
      });
      await slapd.addPerson({ uid: 'iris', password: 'iris-pw', policyDn });
      const outcome = await directory.authenticate('iris', 'iris-pw');
      expect(outcome).toMatchObject({ kind: 'ok' });
      const seconds = outcome.kind === 'ok' ? outcome.passwordExpiresInSeconds : undefined;
      expect(seconds).toBeGreaterThan(3500);
      expect(seconds).toBeLessThanOrEqual(3600);
    });

    it('locks after repeated failures and says so, even for the right password', async () => {
      await slapd.addPerson({ uid: 'erin', password: 'erin-pw' });
      for (let attempt = 0; attempt < 5; attempt += 1) await directory.authenticate('erin', 'wrong');
      expect(await directory.authenticate('erin', 'erin-pw')).toEqual({ kind: 'account_locked' });
    });
  });

  describe('transport security', () => {
    it('StartTLS and LDAPS with the CA file', async () => {
      const startTls = createLdapDirectory(
        configOf(slapd.env({ LDAP_START_TLS: 'true', LDAP_CA_FILE: slapd.caFile })),
        log,
      );
      expect(await startTls.authenticate('ann', 'ann-directory-pw')).toMatchObject({ kind: 'ok' });
      const ldaps = createLdapDirectory(
        configOf(slapd.env({ LDAP_URL: slapd.ldapsUrl, LDAP_CA_FILE: slapd.caFile })),
        log,
      );
      expect(await ldaps.authenticate('ann', 'ann-directory-pw')).toMatchObject({ kind: 'ok' });
    });

    it('refuses a certificate it does not trust (no CA file): unavailable, nothing sent in clear', async () => {
      const untrusted = createLdapDirectory(configOf(slapd.env({ LDAP_URL: slapd.ldapsUrl })), log);
      expect(await untrusted.authenticate('ann', 'ann-directory-pw')).toEqual({ kind: 'unavailable' });
      const startTls = createLdapDirectory(configOf(slapd.env({ LDAP_START_TLS: 'true' })), log);
      expect(await startTls.lookupByUsername('ann')).toBe('unavailable');
    });
  });

  describe('faults', () => {
    let silent: Server;
    let silentUrl: string;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      // Accepts connections and never answers: a directory that hangs.
      silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const address = silent.address();
      silentUrl = `ldap://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it.each([
      ['ldap://', {}],
      ['ldaps://', { LDAP_CA_FILE: 'ca' }],
      ['ldap:// with StartTLS', { LDAP_START_TLS: 'true', LDAP_CA_FILE: 'ca' }],
    ])('a hanging directory answers unavailable within the bound (%s)', async (scheme, extra) => {
      const url = scheme === 'ldaps://' ? silentUrl.replace('ldap://', 'ldaps://') : silentUrl;
      const settings: Record<string, string> = { LDAP_URL: url, LDAP_TIMEOUT_MS: '300', ...extra };
      if (settings.LDAP_CA_FILE) settings.LDAP_CA_FILE = slapd.caFile;
      const hanging = createLdapDirectory(configOf(slapd.env(settings)), log);
      const started = performance.now();
      expect(await hanging.authenticate('ann', 'ann-directory-pw')).toEqual({ kind: 'unavailable' });
      expect(performance.now() - started).toBeLessThan(1500);
    });

    it('fails over to the next server when the first is down or hangs', async () => {
      const failover = createLdapDirectory(
        configOf(
          slapd.env({ LDAP_URL: `ldap://127.0.0.1:1 ${silentUrl} ${slapd.url}`, LDAP_TIMEOUT_MS: '1000' }),
        ),
        log,
      );
      expect(await failover.authenticate('ann', 'ann-directory-pw')).toMatchObject({ kind: 'ok' });
      // The hanging server now waits behind the others: the next sign-in does not wait for it.
      const started = performance.now();
      expect(await failover.authenticate('ann', 'ann-directory-pw')).toMatchObject({ kind: 'ok' });
      expect(performance.now() - started).toBeLessThan(800); // waiting for it would take 2 × 1000 ms
    });

    it('stopped: unavailable; started again: signs in (no broken connection kept)', async () => {
      expect(await directory.authenticate('ann', 'ann-directory-pw')).toMatchObject({ kind: 'ok' });
      const annId = await slapd.entryUuid('ann');
      await slapd.stop();
      try {
        expect(await directory.authenticate('ann', 'ann-directory-pw')).toEqual({ kind: 'unavailable' });
        expect(await directory.lookupByStableId(annId)).toBe('unavailable');
      } finally {
        await slapd.start();
      }
      expect(await directory.authenticate('ann', 'ann-directory-pw')).toMatchObject({ kind: 'ok' });
    });

    it('a wrong LDAP_BIND_PASSWORD stops binding after a few refusals (no lockout of the service account)', async () => {
      const wrong = createLdapDirectory(
        configOf(slapd.env({ LDAP_BIND_PASSWORD: 'not-the-service-password' })),
        log,
      );
      const before = slapd.bindCount(slapd.serviceDn);
      for (let attempt = 0; attempt < 10; attempt += 1)
        expect(await wrong.authenticate('ann', 'ann-directory-pw')).toEqual({ kind: 'unavailable' });
      await new Promise((resolve) => setTimeout(resolve, 200)); // slapd's log lines arrive after the answers
      expect(slapd.bindCount(slapd.serviceDn) - before).toBe(3);
      expect(warnings.join('\n')).not.toContain('not-the-service-password');
      expect(warnings.join('\n')).not.toContain('ann-directory-pw');
    });
  });

  it('never puts a password in a warning', () => {
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.join('\n')).not.toContain(slapd.servicePassword);
    for (const password of ['ann-directory-pw', 'dave-old-pw', 'dave-new-pw', 'hank-old-pw'])
      expect(warnings.join('\n')).not.toContain(password);
  });
});
