/**
 * What the directory-user tests do to the directory, over the slapd fixture (helpers/slapd.ts):
 * people added with a password and groups, renamed (modrdn and a new `uid`), deleted, and the
 * server stopped and started again. Changes go through ldap-utils as the directory's admin, as an
 * administrator would make them; the server under test reads them with its own client.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { Directory } from '../../src/directory/types.js';

const run = promisify(execFile);

/** The slapd fixture's side this adapter needs (its URL, admin and trees; stop and start). */
export interface SlapdAccess {
  url: string;
  adminDn: string;
  adminPassword: string;
  peopleDn: string;
  groupsDn: string;
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
  /** The server's directory client on this slapd. */
  openDirectory(): Promise<Directory>;
}

export interface AddedUser {
  uid: string;
  cn: string;
  password: string;
}

export interface DirectoryFixture {
  directory: Directory;
  addUser(uid: string, options?: { groups?: string[]; mail?: string; kerberosPrincipal?: string }): Promise<AddedUser>;
  renameUser(uid: string, newUid: string): Promise<void>;
  deleteUser(uid: string): Promise<void>;
  entryUuidOf(uid: string): Promise<string>;
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

export function directoryFixtureOver(slapd: SlapdAccess, directory: Directory): DirectoryFixture {
  const auth = ['-x', '-H', slapd.url, '-D', slapd.adminDn, '-w', slapd.adminPassword];
  const modify = (ldif: string) =>
    new Promise<void>((resolve, reject) => {
      const child = execFile('ldapmodify', [...auth, '-c'], (error) => (error ? reject(error) : resolve()));
      child.stdin?.end(ldif);
    });
  const dnOf = (uid: string) => `uid=${uid},${slapd.peopleDn}`;
  const groupDn = (cn: string) => `cn=${cn},${slapd.groupsDn}`;

  async function ensureGroup(cn: string, memberDn: string) {
    const exists = await run('ldapsearch', [...auth, '-LLL', '-b', groupDn(cn), '-s', 'base', 'dn']).then(
      () => true,
      () => false,
    );
    await modify(
      exists
        ? `dn: ${groupDn(cn)}\nchangetype: modify\nadd: member\nmember: ${memberDn}\n`
        : `dn: ${groupDn(cn)}\nchangetype: add\nobjectClass: groupOfNames\ncn: ${cn}\nmember: ${memberDn}\n`,
    );
  }

  return {
    directory,
    async addUser(uid, options = {}) {
      const password = `pw-${randomBytes(9).toString('base64url')}`;
      const cn = `${uid[0]?.toUpperCase()}${uid.slice(1)} Example`;
      await modify(
        [
          `dn: ${dnOf(uid)}`,
          'changetype: add',
          'objectClass: inetOrgPerson',
          `uid: ${uid}`,
          `cn: ${cn}`,
          `sn: Example`,
          `mail: ${options.mail ?? `${uid}@example.test`}`,
          `userPassword: ${password}`,
          '',
        ].join('\n'),
      );
      for (const group of options.groups ?? []) await ensureGroup(group, dnOf(uid));
      return { uid, cn, password };
    },
    async renameUser(uid, newUid) {
      await modify(`dn: ${dnOf(uid)}\nchangetype: modrdn\nnewrdn: uid=${newUid}\ndeleteoldrdn: 1\n`);
    },
    async deleteUser(uid) {
      await modify(`dn: ${dnOf(uid)}\nchangetype: delete\n`);
    },
    async entryUuidOf(uid) {
      const { stdout } = await run('ldapsearch', [...auth, '-LLL', '-b', dnOf(uid), '-s', 'base', 'entryUUID']);
      const match = /^entryUUID: (.+)$/m.exec(stdout);
      if (!match?.[1]) throw new Error(`no entryUUID for ${uid}`);
      return match[1].trim();
    },
    stopServer: () => slapd.stopServer(),
    startServer: () => slapd.startServer(),
    async stop() {
      await directory.close();
      await slapd.stop();
    },
  };
}
