#!/usr/bin/env node
// The one list of system programs the suites run (deploy/ci/system-packages.json), read by .ci/run,
// the GitHub workflow and e2e/system-requirements.ts. Node's standard library only: it runs before
// `pnpm install` (libkrb5-dev must be there when the optional kerberos binding builds).
//
//   node deploy/ci/system-packages.mjs install [--sudo]   installs what is missing (apt-get), then checks
//   node deploy/ci/system-packages.mjs check               exits 1 naming what is missing
//   node deploy/ci/system-packages.mjs list                every entry: name, Debian packages, files that need it
//
// An entry is needed when one of the files that need it (suites, or .ci/run) exists in this checkout.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** @typedef {{ name: string, what: string, debian: string[], paths: string[], env?: string, noRecommends?: boolean, debconf?: string[], neededBy: string[] }} Requirement */

/** @returns {Requirement[]} */
export function systemRequirements() {
  const file = join(repositoryRoot, 'deploy', 'ci', 'system-packages.json');
  return JSON.parse(readFileSync(file, 'utf8')).requirements;
}

const onPath = (command) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

/** `/usr/lib/postgresql/*\/bin/initdb`: one `*` segment matches any folder name. */
function existsWithGlob(path) {
  const star = path.split('/').indexOf('*');
  if (star < 0) return existsSync(path);
  const parts = path.split('/');
  const parent = parts.slice(0, star).join('/') || '/';
  if (!existsSync(parent)) return false;
  return readdirSync(parent).some((name) =>
    existsWithGlob([parent, name, ...parts.slice(star + 1)].join('/')),
  );
}

/** The paths that prove `requirement` installed, the first replaced by its environment variable when set. */
export function requiredPaths(requirement, environment = process.env) {
  if (!requirement.env) return requirement.paths;
  const [variable, ...file] = requirement.env.split('/');
  const value = environment[variable];
  if (!value) return requirement.paths;
  return [join(value, ...file), ...requirement.paths.slice(1)];
}

/** The paths of `requirement` missing on this machine (empty when it is installed). */
export function missingPaths(requirement, environment = process.env) {
  return requiredPaths(requirement, environment).filter((path) =>
    path.startsWith('/') ? !existsWithGlob(path) : !onPath(path),
  );
}

/** Whether a file that needs `requirement` exists in this checkout. */
export const neededHere = (requirement) =>
  requirement.neededBy.some((file) => existsSync(join(repositoryRoot, file)));

function run(command, args, input) {
  console.log(`$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, {
    stdio: [input === undefined ? 'ignore' : 'pipe', 'inherit', 'inherit'],
    input,
  });
  if (result.status !== 0) throw new Error(`${command} exited with ${result.status ?? result.signal}`);
}

function install(sudo) {
  const missing = systemRequirements().filter((r) => neededHere(r) && missingPaths(r).length > 0);
  if (missing.length === 0) return console.log('system packages: every program the suites need is installed');
  const asRoot = (command, args, input) =>
    sudo ? run('sudo', [command, ...args], input) : run(command, args, input);
  const environment = ['env', 'DEBIAN_FRONTEND=noninteractive'];
  const preseed = missing.flatMap((r) => r.debconf ?? []);
  if (preseed.length > 0) asRoot('debconf-set-selections', [], `${preseed.join('\n')}\n`);
  // The packages' own services stay stopped (a KDC without a realm would fail the install on a
  // runner with systemd): policy-rc.d answering 101 is Debian's way to say "do not start services".
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !existsSync(policy);
  if (ownPolicy) asRoot('sh', ['-c', `printf '#!/bin/sh\\nexit 101\\n' > ${policy} && chmod +x ${policy}`]);
  try {
    asRoot(environment[0], [environment[1], 'apt-get', 'update', '-qq']);
    for (const recommends of [false, true]) {
      const packages = missing.filter((r) => !r.noRecommends === recommends).flatMap((r) => r.debian);
      if (packages.length === 0) continue;
      const flags = recommends ? [] : ['--no-install-recommends'];
      asRoot(environment[0], [environment[1], 'apt-get', 'install', '-y', '-qq', ...flags, ...packages]);
    }
  } finally {
    if (ownPolicy) asRoot('rm', ['-f', policy]);
  }
}

function check() {
  const problems = systemRequirements()
    .filter(neededHere)
    .map((r) => [r, missingPaths(r)])
    .filter(([, paths]) => paths.length > 0)
    .map(([r, paths]) => `${r.name}: ${paths.join(', ')} missing (apt-get install ${r.debian.join(' ')})`);
  for (const line of problems) console.error(`system packages: ${line}`);
  return problems.length === 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...flags] = process.argv.slice(2);
  if (command === 'install') {
    install(flags.includes('--sudo'));
    process.exit(check() ? 0 : 1);
  } else if (command === 'check') {
    process.exit(check() ? 0 : 1);
  } else if (command === 'list') {
    for (const r of systemRequirements())
      console.log(`${r.name}\t${r.debian.join(' ')}\t${r.neededBy.join(' ')}`);
  } else {
    console.error('usage: node deploy/ci/system-packages.mjs install [--sudo] | check | list');
    process.exit(2);
  }
}
