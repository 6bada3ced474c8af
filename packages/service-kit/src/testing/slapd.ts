import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ldapts';
import { findFreePort } from './free-port.js';
import { requireSystemProgram, suiteCanRun, systemProgramMissing } from './system-programs.js';
import { makeThrowAwayCa, type ThrowAwayCa } from './throw-away-certificate.js';

/**
 * A real OpenLDAP server (Debian's `slapd`) for one suite: its own slapd.conf and mdb database in a
 * temporary folder, `ldap://` and `ldaps://` on free loopback ports, a certificate from a
 * throw-away CA, the password-policy overlay, `ou=people` and `ou=groups`, a service account that
 * may search, and the root DN for the fixture's own changes. Stopped by its PID; `stop()` and
 * `start()` take it down and bring it back on the same ports (the directory-down cases).
 */

const SLAPD = '/usr/sbin/slapd';
export const BASE_DN = 'dc=example,dc=test';
export const PEOPLE_DN = `ou=people,${BASE_DN}`;
export const GROUPS_DN = `ou=groups,${BASE_DN}`;
export const SERVICE_DN = `cn=service,${BASE_DN}`;
const ROOT_DN = `cn=admin,${BASE_DN}`;
const POLICY_DN = `cn=default,ou=policies,${BASE_DN}`;

/** The entry of deploy/ci/system-packages.json this fixture runs. */
export const slapdRequires = 'slapd';

/** Why the slapd suites cannot run here, or undefined when they can. */
export const slapdMissing = (): string | undefined => systemProgramMissing(slapdRequires);

/** Left out with a line saying what to install; under CI=true a missing slapd fails the run. */
export const describeWithSlapd = (): boolean => suiteCanRun(slapdRequires, 'directory suites');

export interface DirectoryPerson {
  uid: string;
  password: string;
  cn?: string;
  mail?: string;
  krbPrincipalName?: string;
  /**
   * Their own password policy (`pwdPolicySubentry`). Given at creation: ppolicy stamps
   * `pwdChangedTime`, which expiry counts from, only when the entry's policy ages passwords.
   */
  policyDn?: string;
}

export interface SlapdFixture {
  url: string;
  ldapsUrl: string;
  caFile: string;
  baseDn: string;
  serviceDn: string;
  servicePassword: string;
  /** The environment that points the auth server at this directory. */
  env(overrides?: Record<string, string>): Record<string, string>;
  addPerson(person: DirectoryPerson): Promise<string>;
  deletePerson(uid: string): Promise<void>;
  /** Renames the entry (modrdn) and its `uid`; the entryUUID stays. */
  renamePerson(uid: string, newUid: string): Promise<string>;
  setPassword(uid: string, password: string): Promise<void>;
  /** Marks the password as reset by an administrator (ppolicy `pwdReset`: must change). */
  requirePasswordChange(uid: string): Promise<void>;
  addGroup(cn: string, memberDns: readonly string[], base?: string): Promise<string>;
  /** Changes the default password policy (ppolicy attributes, e.g. `pwdMaxAge`). */
  setPolicy(attributes: Record<string, string>): Promise<void>;
  /**
   * A password policy of its own (a `pwdPolicy` entry) for the people added with its DN as
   * `policyDn`, so that a tiny `pwdMaxAge` expires them and nobody else.
   */
  addPolicy(name: string, attributes: Record<string, string>): Promise<string>;
  entryUuid(uid: string): Promise<string>;
  /** The `userPassword` value as stored (to see that a change was hashed by the server). */
  storedPassword(uid: string): Promise<string>;
  personDn(uid: string): string;
  /** Simple binds the server has answered, by DN (from its `stats` log). */
  bindCount(dn: string): number;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const freePort = findFreePort;

/** Loaded on first use: the testing entry stays quick to import for the suites that never start slapd. */
const loadLdapts = () => import('ldapts');

function hashed(password: string): string {
  return execFileSync('/usr/sbin/slappasswd', ['-h', '{SSHA}', '-s', password], { encoding: 'utf8' }).trim();
}

function slapdConf(dir: string, ca: ThrowAwayCa, rootPassword: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
include ${join(dir, 'kerberos-principal.schema')}
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload ppolicy
pidfile ${join(dir, 'slapd.pid')}
argsfile ${join(dir, 'slapd.args')}
TLSCACertificateFile ${ca.caFile}
TLSCertificateFile ${join(dir, 'server.pem')}
TLSCertificateKeyFile ${join(dir, 'server.key')}
database mdb
maxsize 67108864
suffix "${BASE_DN}"
rootdn "${ROOT_DN}"
rootpw ${hashed(rootPassword)}
directory ${join(dir, 'data')}
overlay ppolicy
ppolicy_default "${POLICY_DN}"
ppolicy_use_lockout
access to attrs=userPassword by self write by anonymous auth by * none
access to * by dn.exact="${SERVICE_DN}" read by self read by * none
`;
}

function seedLdif(servicePassword: string): string {
  return `dn: ${BASE_DN}
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,${BASE_DN}
objectClass: organizationalUnit
ou: people

dn: ou=groups,${BASE_DN}
objectClass: organizationalUnit
ou: groups

dn: ou=elsewhere,${BASE_DN}
objectClass: organizationalUnit
ou: elsewhere

dn: ou=policies,${BASE_DN}
objectClass: organizationalUnit
ou: policies

dn: ${POLICY_DN}
objectClass: pwdPolicy
objectClass: person
cn: default
sn: default
pwdAttribute: userPassword
pwdLockout: TRUE
pwdMaxFailure: 5
pwdLockoutDuration: 300
pwdAllowUserChange: TRUE
pwdMustChange: TRUE

dn: ${SERVICE_DN}
objectClass: person
cn: service
sn: service
userPassword: ${hashed(servicePassword)}
`;
}

/** MIT Kerberos' `krbPrincipalName` (its LDAP schema's OIDs), as FreeIPA and MIT's KDB store it. */
const KERBEROS_PRINCIPAL_SCHEMA = `attributetype ( 2.16.840.1.113719.1.301.4.1.1 NAME 'krbPrincipalName'
  EQUALITY caseExactIA5Match SUBSTR caseExactSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 )
objectclass ( 2.16.840.1.113719.1.301.6.8.1 NAME 'krbPrincipalAux' SUP top AUXILIARY MAY ( krbPrincipalName ) )
`;

class SlapdProcess {
  private child: ChildProcess | null = null;
  log = '';

  constructor(
    private readonly conf: string,
    private readonly urls: string,
  ) {}

  async start(probeUrl: string): Promise<void> {
    // `-d stats`: stay in the foreground and log each operation (the bind counts read it).
    const child = spawn(SLAPD, ['-f', this.conf, '-h', this.urls, '-d', 'stats'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => {
      this.log += chunk.toString('utf8');
    });
    const { Client } = await loadLdapts();
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`slapd exited at start:\n${this.log.slice(-2000)}`);
      const client = new Client({ url: probeUrl, connectTimeout: 500, timeout: 1000 });
      try {
        await client.bind('', '');
        await client.unbind();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`slapd did not answer:\n${this.log.slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Starts slapd in a new temporary folder; `close()` stops it and removes the folder. */
export async function startSlapd(): Promise<SlapdFixture> {
  requireSystemProgram(slapdRequires, 'the slapd fixture');
  const dir = mkdtempSync(join(tmpdir(), 'slapd-'));
  mkdirSync(join(dir, 'data'));
  const ca = makeThrowAwayCa();
  writeFileSync(join(dir, 'server.pem'), ca.cert);
  writeFileSync(join(dir, 'server.key'), ca.key, { mode: 0o600 });
  const rootPassword = randomBytes(12).toString('base64url');
  const servicePassword = randomBytes(12).toString('base64url');
  const conf = join(dir, 'slapd.conf');
  writeFileSync(join(dir, 'kerberos-principal.schema'), KERBEROS_PRINCIPAL_SCHEMA);
  writeFileSync(conf, slapdConf(dir, ca, rootPassword));
  writeFileSync(join(dir, 'seed.ldif'), seedLdif(servicePassword));
  execFileSync('/usr/sbin/slapadd', ['-f', conf, '-l', join(dir, 'seed.ldif')], { stdio: 'pipe' });
  const [port, ldapsPort] = [await freePort(), await freePort()];
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
  const server = new SlapdProcess(conf, `${url}/ ${ldapsUrl}/`);
  await server.start(url);
  const { Attribute, Change, Client } = await loadLdapts();

  async function asRoot<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ url, timeout: 5000, connectTimeout: 2000 });
    try {
      await client.bind(ROOT_DN, rootPassword);
      return await work(client);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }
  const personDn = (uid: string) => `uid=${uid},${PEOPLE_DN}`;

  return {
    url,
    ldapsUrl,
    caFile: ca.caFile,
    baseDn: BASE_DN,
    serviceDn: SERVICE_DN,
    servicePassword,
    personDn,
    env: (overrides = {}) => ({
      LDAP_URL: url,
      LDAP_BIND_DN: SERVICE_DN,
      LDAP_BIND_PASSWORD: servicePassword,
      LDAP_USER_BASE_DN: PEOPLE_DN,
      LDAP_GROUP_BASE_DN: GROUPS_DN,
      LDAP_TIMEOUT_MS: '2000',
      ...overrides,
    }),
    addPerson: (person) =>
      asRoot(async (client) => {
        const dn = personDn(person.uid);
        await client.add(dn, {
          objectClass: ['inetOrgPerson', ...(person.krbPrincipalName ? ['krbPrincipalAux'] : [])],
          uid: person.uid,
          cn: person.cn ?? person.uid,
          sn: person.uid,
          userPassword: person.password,
          ...(person.mail ? { mail: person.mail } : {}),
          ...(person.krbPrincipalName ? { krbPrincipalName: person.krbPrincipalName } : {}),
          ...(person.policyDn ? { pwdPolicySubentry: person.policyDn } : {}),
        });
        return dn;
      }),
    deletePerson: (uid) => asRoot((client) => client.del(personDn(uid))),
    renamePerson: (uid, newUid) =>
      asRoot(async (client) => {
        await client.modifyDN(personDn(uid), `uid=${newUid}`);
        return personDn(newUid);
      }),
    setPassword: (uid, password) =>
      asRoot((client) =>
        client.modify(
          personDn(uid),
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'userPassword', values: [password] }),
          }),
        ),
      ),
    requirePasswordChange: (uid) =>
      asRoot((client) =>
        client.modify(
          personDn(uid),
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'pwdReset', values: ['TRUE'] }),
          }),
        ),
      ),
    addGroup: (cn, memberDns, base = GROUPS_DN) =>
      asRoot(async (client) => {
        const dn = `cn=${cn},${base}`;
        await client.add(dn, { objectClass: 'groupOfNames', cn, member: [...memberDns] });
        return dn;
      }),
    setPolicy: (attributes) =>
      asRoot(async (client) => {
        const changes = Object.entries(attributes).map(
          ([type, value]) =>
            new Change({ operation: 'replace', modification: new Attribute({ type, values: [value] }) }),
        );
        await client.modify(POLICY_DN, changes);
      }),
    addPolicy: (name, attributes) =>
      asRoot(async (client) => {
        const policyDn = `cn=${name},ou=policies,${BASE_DN}`;
        await client.add(policyDn, {
          objectClass: ['pwdPolicy', 'person'],
          cn: name,
          sn: name,
          pwdAttribute: 'userPassword',
          ...attributes,
        });
        return policyDn;
      }),
    entryUuid: (uid) =>
      asRoot(async (client) => {
        const { searchEntries } = await client.search(personDn(uid), {
          scope: 'base',
          attributes: ['entryUUID'],
        });
        return String(searchEntries[0]?.entryUUID);
      }),
    storedPassword: (uid) =>
      asRoot(async (client) => {
        const { searchEntries } = await client.search(personDn(uid), {
          scope: 'base',
          attributes: ['userPassword'],
        });
        return String(searchEntries[0]?.userPassword);
      }),
    bindCount: (dn) => server.log.split('\n').filter((line) => line.includes(`BIND dn="${dn}"`)).length,
    stop: () => server.stop(),
    start: () => server.start(url),
    close: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
      ca.remove();
    },
  };
}
