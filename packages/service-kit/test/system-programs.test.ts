import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemRequirements } from '../../../deploy/ci/system-packages.mjs';
import {
  kerberosRealmRequires,
  prometheusRequires,
  requireSystemProgram,
  slapdRequires,
  systemProgramMissing,
  throwAwayCaRequires,
} from '../src/testing/index.js';

const madeUp = {
  name: 'made-up',
  what: 'a made-up daemon',
  debian: ['made-up-server', 'made-up-utils'],
  paths: ['/nowhere/made-up-daemon'],
  env: 'MADE_UP_BIN',
  neededBy: [],
};

describe('the fixtures name their system programs from deploy/ci/system-packages.json', () => {
  it.each([
    ['slapd', slapdRequires],
    ['the Kerberos realm', kerberosRealmRequires],
    ['Prometheus', prometheusRequires],
    ['the throw-away certificate', throwAwayCaRequires],
  ])('%s names an entry of the list', (_fixture, name) => {
    expect(systemRequirements().map((entry) => entry.name)).toContain(name);
  });

  it('a missing program is named with the Debian packages to install and the variable to set', () => {
    expect(systemProgramMissing(madeUp.name, madeUp)).toBe(
      'a made-up daemon is not installed (missing /nowhere/made-up-daemon): apt-get install made-up-server made-up-utils (or set MADE_UP_BIN)',
    );
  });

  it('an installed program is not missing', () => {
    expect(systemProgramMissing('sh', { ...madeUp, paths: ['sh'] })).toBeUndefined();
  });

  it('a name the list does not have fails at once', () => {
    expect(() => requireSystemProgram('no-such-entry', 'a fixture')).toThrow(
      'deploy/ci/system-packages.json has no entry named "no-such-entry"',
    );
  });
});

/** Every module the file reaches through relative imports, and the packages they import. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const [, specifier] of source.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      if (specifier === undefined) continue;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else
        packages.add(
          specifier.startsWith('@')
            ? specifier.split('/').slice(0, 2).join('/')
            : (specifier.split('/')[0] ?? ''),
        );
    }
  };
  visit(entry);
  return { files, packages };
}

describe('the production entry stays clear of the test kit', () => {
  const root = join(import.meta.dirname, '..');
  // The fixtures' packages: development dependencies, absent from a production install.
  const fixturePackages = ['jose', 'ldapts', 'mailparser', 'oidc-provider', 'smtp-server'];

  it('reaches no testing module and no development dependency', () => {
    const { files, packages } = importGraph(join(root, 'src', 'index.ts'));
    expect([...files].filter((file) => file.includes(`${join('src', 'testing')}`))).toEqual([]);
    expect([...packages].filter((name) => fixturePackages.includes(name))).toEqual([]);
  });

  it('the walk sees the testing entry reach the fixtures’ packages (the check above can fail)', () => {
    const { packages } = importGraph(join(root, 'src', 'testing', 'index.ts'));
    expect([...packages]).toEqual(
      expect.arrayContaining(['ldapts', 'oidc-provider', 'smtp-server', 'mailparser']),
    );
  });
});
