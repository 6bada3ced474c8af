import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The e2e suites drive real system programs: Debian's chromium, nginx and openssl, and a
 * PostgreSQL server (a shared one, and its binaries for a private one). The README's test command
 * must pass on a machine that has only Node.js and npm, so a suite whose programs are missing is
 * left out there, with a line that says which and how to get them. Under CI (CI=true, as .ci/run
 * and the GitHub workflow set it) nothing may be left out: a missing program fails the run.
 */
interface Requirement {
  name: string;
  available: () => boolean;
  install: string;
}

const onPath = (command: string) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

const chromium: Requirement = {
  name: 'chromium',
  available: () => existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'),
  install: 'apt-get install chromium (or set CHROMIUM_PATH)',
};

const nginx: Requirement = {
  name: 'nginx and openssl',
  available: () => existsSync(process.env.NGINX_BIN ?? '/usr/sbin/nginx') && onPath('openssl'),
  install: 'apt-get install nginx openssl (or set NGINX_BIN)',
};

const kerberos: Requirement = {
  name: 'MIT Kerberos (krb5kdc, kdb5_util, kadmin.local, kinit), curl with SPNEGO, and the optional kerberos binding',
  available: () =>
    ['krb5kdc', 'kdb5_util', 'kadmin.local', 'kinit'].every(
      (program) => onPath(program) || existsSync(join('/usr/sbin', program)),
    ) &&
    spawnSync('sh', ['-c', 'curl -V | grep -q SPNEGO'], { stdio: 'ignore' }).status === 0 &&
    existsSync(
      join(
        import.meta.dirname,
        '..',
        'apps',
        'auth-server',
        'node_modules',
        'kerberos',
        'build',
        'Release',
        'kerberos.node',
      ),
    ),
  install:
    'apt-get install krb5-kdc krb5-admin-server krb5-user libkrb5-dev curl, then pnpm install (builds the optional kerberos package)',
};

const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const postgresServer: Requirement = {
  name: `a PostgreSQL server at ${adminUrl.replace(/\/\/[^@]*@/, '//')}`,
  // A bounded TCP connect in a child process: the config is loaded synchronously.
  available: () => {
    const { hostname, port } = new URL(adminUrl);
    const probe = `require('net').connect(${Number(port) || 5432}, ${JSON.stringify(hostname)})
      .on('connect', () => process.exit(0)).on('error', () => process.exit(1));
      setTimeout(() => process.exit(1), 2000);`;
    return spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore' }).status === 0;
  },
  install: 'start PostgreSQL on 127.0.0.1:5432 or set TEST_DATABASE_URL',
};

const postgresBinaries: Requirement = {
  name: 'the PostgreSQL server binaries (initdb, postgres, pg_ctl)',
  available: () => {
    if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'initdb'));
    const root = '/usr/lib/postgresql';
    return existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, 'bin', 'initdb')));
  },
  install: 'apt-get install postgresql (or set PG_BIN)',
};

const postgresClient: Requirement = {
  name: 'pg_dump and pg_restore',
  available: () => onPath('pg_dump') && onPath('pg_restore'),
  install: 'apt-get install postgresql-client',
};

const prometheus: Requirement = {
  name: 'Prometheus (prometheus, promtool)',
  available: () =>
    existsSync(process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus') &&
    existsSync(process.env.PROMTOOL_BIN ?? '/usr/bin/promtool'),
  install: 'apt-get install prometheus (or set PROMETHEUS_BIN and PROMTOOL_BIN)',
};

const slapd: Requirement = {
  name: 'OpenLDAP (slapd, slappasswd)',
  available: () => existsSync('/usr/sbin/slapd') && existsSync('/usr/lib/ldap/back_mdb.so'),
  install: 'apt-get install slapd ldap-utils',
};

const suites: Record<string, Requirement[]> = {
  'test/orders-app.test.ts': [chromium],
  'test/public-spa.test.ts': [chromium],
  'test/device-and-pages.test.ts': [chromium],
  'test/mfa-pages.test.ts': [chromium],
  'test/first-run-pages.test.ts': [chromium],
  'test/gateway.test.ts': [nginx],
  'test/multi-instance.test.ts': [postgresServer],
  'test/tracing.test.ts': [postgresServer, slapd],
  'test/rolling-upgrade.test.ts': [postgresServer],
  'test/backup-restore.test.ts': [postgresServer, postgresClient],
  'test/database-faults.test.ts': [postgresBinaries],
  'test/kerberos.test.ts': [kerberos],
  'test/kerberos-browser.test.ts': [kerberos, chromium],
  'test/prometheus-rules.test.ts': [prometheus],
  'test/directory-browser.test.ts': [slapd, chromium],
  'test/dev-recipes.test.ts': [slapd, chromium],
  'test/kerberos-directory.test.ts': [kerberos, slapd],
  'test/prometheus.test.ts': [prometheus, postgresBinaries],
};

/** The test files whose programs are missing on this machine; throws under CI when there are any. */
export function suitesMissingPrograms(): string[] {
  const leftOut: string[] = [];
  const reasons: string[] = [];
  for (const [file, requirements] of Object.entries(suites)) {
    const absent = requirements.filter((requirement) => !requirement.available());
    if (absent.length === 0) continue;
    leftOut.push(file);
    reasons.push(`${file}: needs ${absent.map((r) => `${r.name} (${r.install})`).join('; ')}`);
  }
  if (reasons.length > 0) {
    const report = reasons.map((line) => `  - ${line}`).join('\n');
    if (process.env.CI) throw new Error(`e2e: system programs missing under CI:\n${report}`);
    console.warn(`e2e: left out on this machine (CI runs them all):\n${report}`);
  }
  return leftOut;
}
