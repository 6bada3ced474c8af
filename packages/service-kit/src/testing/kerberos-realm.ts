/**
 * A throw-away Kerberos realm with Debian's MIT Kerberos (krb5-kdc, krb5-admin-server for
 * kadmin.local, krb5-user for kinit): its own KRB5_CONFIG and KRB5_KDC_PROFILE in a temporary
 * folder, a KDC (`krb5kdc -n`, foreground) on a free loopback port, principals made with
 * `kadmin.local`, a keytab for `HTTP/localhost`. `stop()` ends the KDC and removes the folder.
 * Nothing touches /etc/krb5.conf or the system's KDC.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './free-port.js';
import { requireSystemProgram } from './system-programs.js';

/** The entry of deploy/ci/system-packages.json this fixture runs. */
export const kerberosRealmRequires = 'kerberos';

export const REALM = 'OIDC.TEST';

export interface UserPrincipal {
  /** `name@REALM`. */
  principal: string;
  password: string;
}

export interface KerberosRealm {
  directory: string;
  /** KRB5_CONFIG of every client and server of the realm. */
  krb5Config: string;
  /** FILE keytab with the key of `HTTP/localhost@REALM`. */
  keytab: string;
  /** Environment for a process of the realm (KRB5_CONFIG, a replay-cache folder in the realm). */
  env: Record<string, string>;
  /** Adds a user principal (`maxLife` e.g. "1 minute"). */
  addUser(name: string, options?: { maxLife?: string }): UserPrincipal;
  /** `kinit` into a fresh credential cache; returns its KRB5CCNAME. */
  kinit(user: UserPrincipal): string;
  /** A KRB5CCNAME with no ticket in it. */
  emptyCache(): string;
  stop(): Promise<void>;
}

function run(command: string, args: string[], env: Record<string, string>, input?: string): string {
  const result = spawnSync(command, args, {
    env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin`, ...env },
    input,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}

function configFiles(directory: string, port: number) {
  // rdns/dns_canonicalize_hostname off: the service name is exactly the host the client was given
  // (README "Kerberos", troubleshooting: DNS canonicalisation). clockskew 10 s instead of 300 s
  // so a test can see an expired ticket refused without waiting five extra minutes.
  const krb5Conf = `[libdefaults]
  default_realm = ${REALM}
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  dns_canonicalize_hostname = false
  clockskew = 10
  forwardable = false
  udp_preference_limit = 1
[realms]
  ${REALM} = {
    kdc = 127.0.0.1:${port}
  }
[domain_realm]
  localhost = ${REALM}
`;
  const kdcConf = `[kdcdefaults]
  kdc_ports = ${port}
  kdc_tcp_listen = ${port}
  kdc_listen = ${port}
  kdc_tcp_ports = ${port}
[realms]
  ${REALM} = {
    database_name = ${directory}/principal
    key_stash_file = ${directory}/stash
    acl_file = ${directory}/kadm5.acl
    max_life = 1h
    max_renewable_life = 0
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:${directory}/kdc.log
`;
  return { krb5Conf, kdcConf };
}

export async function startKerberosRealm(): Promise<KerberosRealm> {
  requireSystemProgram(kerberosRealmRequires, 'the Kerberos realm fixture');
  const directory = await mkdtemp(join(tmpdir(), 'e2e-krb5-'));
  const port = await findFreePort();
  const krb5Config = join(directory, 'krb5.conf');
  const { krb5Conf, kdcConf } = configFiles(directory, port);
  await writeFile(krb5Config, krb5Conf);
  await writeFile(join(directory, 'kdc.conf'), kdcConf);
  await writeFile(join(directory, 'kadm5.acl'), '');
  const env = {
    KRB5_CONFIG: krb5Config,
    KRB5_KDC_PROFILE: join(directory, 'kdc.conf'),
    // Replay caches of every process of the realm stay inside the realm's folder.
    KRB5RCACHEDIR: directory,
  };
  const secret = () => randomBytes(18).toString('base64url');
  run('kdb5_util', ['create', '-s', '-r', REALM, '-P', secret()], env);
  const kadmin = (query: string) => run('kadmin.local', ['-r', REALM, '-q', query], env);
  const keytab = join(directory, 'http.keytab');
  kadmin('addprinc -randkey HTTP/localhost');
  kadmin(`ktadd -k ${keytab} HTTP/localhost`);

  const kdc = spawn('krb5kdc', ['-n', '-r', REALM], {
    env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let kdcOutput = '';
  kdc.stdout.on('data', (chunk: Buffer) => (kdcOutput += chunk.toString()));
  kdc.stderr.on('data', (chunk: Buffer) => (kdcOutput += chunk.toString()));
  const kdcExited = new Promise<void>((done) => kdc.once('exit', () => done()));
  let caches = 0;

  const realm: KerberosRealm = {
    directory,
    krb5Config,
    keytab,
    env,
    addUser(name, options = {}) {
      const password = secret();
      const maxLife = options.maxLife ? ` -maxlife "${options.maxLife}"` : '';
      kadmin(`addprinc -pw ${password}${maxLife} ${name}`);
      return { principal: `${name}@${REALM}`, password };
    },
    kinit(user) {
      const cache = `FILE:${join(directory, `cc-${++caches}`)}`;
      run('kinit', [user.principal], { ...env, KRB5CCNAME: cache }, `${user.password}\n`);
      return cache;
    },
    emptyCache: () => `FILE:${join(directory, `cc-empty-${++caches}`)}`,
    async stop() {
      if (kdc.exitCode === null && kdc.signalCode === null) {
        kdc.kill('SIGTERM');
        await kdcExited;
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
  // The KDC is up once a user can get a ticket from it (kinit retries nothing on its own).
  const probe = realm.addUser('probe');
  for (let attempt = 0; ; attempt++) {
    try {
      realm.kinit(probe);
      return realm;
    } catch (error) {
      if (attempt > 50 || kdc.exitCode !== null) {
        await realm.stop();
        throw new Error(`the KDC did not start: ${(error as Error).message}\n${kdcOutput}`);
      }
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}
