/**
 * The directory-user tests' view of the slapd fixture (service-kit's testing/slapd.ts): a person added with a
 * fresh password and groups in one call, and the server's own directory client opened on it.
 */
import { randomBytes } from 'node:crypto';
import { type SlapdFixture, startSlapd } from '@oidc-orders/service-kit/testing';
import { loadConfig } from '../../src/config.js';
import { openDirectory } from '../../src/directory/open-directory.js';
import type { Directory } from '../../src/directory/types.js';

export interface AddedUser {
  uid: string;
  cn: string;
  password: string;
}

export interface DirectoryFixture {
  slapd: SlapdFixture;
  /** The server's directory client (src/directory/), on this slapd. */
  directory: Directory;
  addUser(
    uid: string,
    options?: { groups?: string[]; mail?: string; krbPrincipalName?: string },
  ): Promise<AddedUser>;
  close(): Promise<void>;
}

/** The `LDAP_*` settings a test app or server gets for this slapd, parsed as the server parses them. */
export function directoryConfigFor(slapd: SlapdFixture, overrides: Record<string, string> = {}) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: 'pglite://memory',
    ISSUER: 'https://issuer.example.test',
    KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64url'),
    ...slapd.env(overrides),
  }).directory;
  if (config === null) throw new Error('the slapd fixture gave no LDAP_URL');
  return config;
}

export async function startDirectoryFixture(
  overrides: Record<string, string> = {},
): Promise<DirectoryFixture> {
  const slapd = await startSlapd();
  const directory = await openDirectory(directoryConfigFor(slapd, overrides), {
    warn: (fields, message) => console.warn(message, fields),
  });
  if (directory === null) throw new Error('no directory opened');
  return {
    slapd,
    directory,
    async addUser(uid, options = {}) {
      const password = `pw-${randomBytes(9).toString('base64url')}`;
      const cn = `${uid[0]?.toUpperCase()}${uid.slice(1)} Example`;
      const dn = await slapd.addPerson({
        uid,
        password,
        cn,
        mail: options.mail ?? `${uid}@example.test`,
        ...(options.krbPrincipalName ? { krbPrincipalName: options.krbPrincipalName } : {}),
      });
      for (const group of options.groups ?? []) await slapd.addGroup(group, [dn]);
      return { uid, cn, password };
    },
    async close() {
      await directory.close();
      await slapd.close();
    },
  };
}
