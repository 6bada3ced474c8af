import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type SystemRequirement, systemRequirements } from '../deploy/ci/system-packages.mjs';
// By path, not the kit's testing entry: vitest.config.ts loads this file, and the entry's
// TypeScript (and its fixtures' packages) is only loadable inside vitest.
import { systemProgram } from '../packages/service-kit/src/testing/system-programs.js';

/**
 * The e2e suites drive real system programs: Debian's chromium, nginx and openssl, MIT Kerberos,
 * Prometheus, OpenLDAP, and a PostgreSQL server (a shared one, and its binaries for a private one).
 * Which suite needs which package is written once, in deploy/ci/system-packages.json, which .ci/run
 * and the GitHub workflow install from. The README's test command must pass on a machine that has
 * only Node.js and npm, so a suite whose programs are missing is left out there, with a line that
 * says which and how to get them. Under CI (CI=true, as .ci/run and the GitHub workflow set it)
 * nothing may be left out: a missing program fails the run.
 */
interface Requirement {
  name: string;
  available: () => boolean;
  install: string;
}

/** What must hold besides the listed paths. */
const beyondThePackages: Record<string, { available: () => boolean; install: string }> = {
  kerberos: {
    available: () =>
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
    install: ', then pnpm install',
  },
};

/** The list's entry as the test kit's fixtures check it (service-kit's testing/system-programs.ts). */
function fromTheList(entry: SystemRequirement): Requirement {
  const program = systemProgram(entry.name, entry);
  const extra = beyondThePackages[entry.name];
  return {
    name: program.what,
    available: () => program.missing().length === 0 && (extra?.available() ?? true),
    install: `${program.install}${extra?.install ?? ''}`,
  };
}

const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Not a package: a server answering (.ci/run starts the local one, the GitHub workflow a service). */
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

/** The e2e test files (`test/…`) and what each needs: the list's entries, and the shared server. */
function suites(): Record<string, Requirement[]> {
  const needs: Record<string, Requirement[]> = {};
  const add = (file: string, requirement: Requirement) => {
    needs[file] = [...(needs[file] ?? []), requirement];
  };
  for (const entry of systemRequirements()) {
    const requirement = fromTheList(entry);
    for (const file of entry.neededBy)
      if (file.startsWith('e2e/test/')) add(file.slice('e2e/'.length), requirement);
  }
  for (const file of ['multi-instance', 'tracing', 'rolling-upgrade', 'backup-restore']) {
    add(`test/${file}.test.ts`, postgresServer);
  }
  return needs;
}

/** The test files whose programs are missing on this machine; throws under CI when there are any. */
export function suitesMissingPrograms(): string[] {
  const leftOut: string[] = [];
  const reasons: string[] = [];
  for (const [file, requirements] of Object.entries(suites())) {
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
