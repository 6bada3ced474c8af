import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workflowProblems } from '../../deploy/ci/check-workflow.mjs';
import { missingPaths, requiredPaths, systemRequirements } from '../../deploy/ci/system-packages.mjs';

/**
 * The three CI definitions read one list of system packages, and the GitHub workflow runs what
 * .ci/run runs (deploy/ci/check-workflow.mjs, which .ci/run's container test also runs).
 */
const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const workflow = read('.github/workflows/ci.yml');
const containerTest = read('deploy/ci/container-test.sh');

describe('the GitHub workflow runs what .ci/run runs', () => {
  it('as committed: no problem', () => {
    expect(workflowProblems(workflow, containerTest)).toEqual([]);
  });

  it('finds a compose job that runs the smoke test before installing the workspace', () => {
    const withoutInstall = workflow.replace(
      /\n {6}- name: the workspace, as in the README\n {8}run: pnpm install --frozen-lockfile/,
      '',
    );
    expect(withoutInstall).not.toBe(workflow);
    expect(workflowProblems(withoutInstall, containerTest)).toEqual([
      'compose job: deploy/smoke-test.mjs runs before the workspace is installed (pnpm install)',
    ]);
  });

  it('finds a compose step the container test does not take', () => {
    const extra = workflow.replace(
      '      - run: docker compose config --quiet',
      '      - run: docker compose pull',
    );
    expect(workflowProblems(extra, containerTest)).toEqual([
      'compose job: the step "docker compose pull" is not one deploy/ci/container-test.sh takes',
    ]);
  });

  it('finds system packages installed after pnpm install, or not from the list', () => {
    const lines = workflow.split('\n');
    const packages = lines.findIndex((line) => line.includes('node deploy/ci/system-packages.mjs install'));
    const moved = [...lines];
    const [name, run] = moved.splice(packages - 1, 2);
    moved.splice(moved.indexOf('      - run: pnpm typecheck'), 0, name as string, run as string);
    expect(workflowProblems(moved.join('\n'), containerTest)).toEqual([
      'test job: system packages installed after pnpm install (libkrb5-dev must come first)',
    ]);
    const removed = lines.filter((_, index) => index !== packages && index !== packages - 1).join('\n');
    expect(workflowProblems(removed, containerTest)).toEqual([
      'test job: no step installs deploy/ci/system-packages.json (node deploy/ci/system-packages.mjs install --sudo)',
    ]);
  });

  it('finds the database tier run on PostgreSQL on every Node version', () => {
    const everyVersion = workflow.replace(/\n +if: matrix\.node == 20/, '');
    expect(workflowProblems(everyVersion, containerTest)).toEqual([
      'test job: the database tier runs on PostgreSQL on every Node version (one is enough)',
    ]);
  });
});

describe('one list of system packages', () => {
  it('.ci/run and the workflow install from deploy/ci/system-packages.json', () => {
    expect(read('.ci/run')).toContain('node deploy/ci/system-packages.mjs install\n');
    expect(workflow).toContain('node deploy/ci/system-packages.mjs install --sudo');
  });

  it('names, for every entry, Debian packages, paths that prove them, and files that exist', () => {
    for (const entry of systemRequirements()) {
      expect(entry.debian.length, entry.name).toBeGreaterThan(0);
      expect(entry.paths.length, entry.name).toBeGreaterThan(0);
      for (const file of entry.neededBy)
        expect(readFileSync(join(root, file)).length, file).toBeGreaterThan(0);
    }
  });

  it('e2e/system-requirements.ts takes each suite’s programs from it', () => {
    expect(read('e2e/system-requirements.ts')).toContain("from '../deploy/ci/system-packages.mjs'");
    const slapd = systemRequirements().find((entry) => entry.name === 'slapd');
    expect(slapd?.debconf).toEqual(['slapd slapd/no_configuration boolean true']);
  });

  it('checks paths with one * segment, commands on PATH, and the variable that replaces the first path', () => {
    const folder = mkdtempSync(join(tmpdir(), 'system-packages-'));
    try {
      mkdirSync(join(folder, '15', 'bin'), { recursive: true });
      writeFileSync(join(folder, '15', 'bin', 'initdb'), '');
      const entry = { name: 't', what: 't', debian: ['t'], neededBy: [], env: 'T_BIN/initdb' };
      expect(missingPaths({ ...entry, paths: [`${folder}/*/bin/initdb`, 'sh'] }, {})).toEqual([]);
      expect(
        missingPaths({ ...entry, paths: [`${folder}/*/bin/postgres`, 'no-such-command-here'] }, {}),
      ).toEqual([`${folder}/*/bin/postgres`, 'no-such-command-here']);
      const paths = ['/nowhere/initdb', 'sh'];
      expect(requiredPaths({ ...entry, paths }, { T_BIN: join(folder, '15', 'bin') })).toEqual([
        join(folder, '15', 'bin', 'initdb'),
        'sh',
      ]);
      expect(missingPaths({ ...entry, paths }, { T_BIN: join(folder, '15', 'bin') })).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
