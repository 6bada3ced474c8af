/**
 * A directory for the e2e suites: the auth server's own slapd fixture (a real OpenLDAP in a
 * temporary folder, the service kit's testing/slapd.ts) and the `LDAP_*` environment that
 * points an auth-server process at it.
 */
import { randomBytes } from 'node:crypto';
import { type SlapdFixture, startSlapd } from '@oidc-orders/service-kit/testing';

export interface E2eDirectory {
  slapd: SlapdFixture;
  serverEnvironment: Record<string, string>;
  /** A person with a fresh password; `cn` is their display name. */
  addUser(uid: string, options?: { mail?: string }): Promise<{ uid: string; cn: string; password: string }>;
  stop(): Promise<void>;
}

export async function directoryFixtureFor(): Promise<E2eDirectory> {
  const slapd = await startSlapd();
  return {
    slapd,
    serverEnvironment: slapd.env(),
    async addUser(uid, options = {}) {
      const password = `pw-${randomBytes(9).toString('base64url')}`;
      const cn = `${uid[0]?.toUpperCase()}${uid.slice(1)} Example`;
      await slapd.addPerson({ uid, password, cn, mail: options.mail ?? `${uid}@example.test` });
      return { uid, cn, password };
    },
    stop: () => slapd.close(),
  };
}
