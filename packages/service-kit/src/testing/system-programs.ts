import {
  missingPaths,
  type SystemRequirement,
  systemRequirements,
} from '../../../../deploy/ci/system-packages.mjs';

/**
 * The system programs a fixture runs (slapd, the KDC, Prometheus, openssl…) are listed once, in
 * deploy/ci/system-packages.json: the Debian packages, the paths that prove them installed, and the
 * files that need them (.ci/run and the GitHub workflow install from the same list). A fixture
 * exports the entry's `name` (`slapdRequires = 'slapd'`) and calls `requireSystemProgram` before it starts
 * anything, so a machine without the program gets one line naming what to install.
 */
export interface SystemProgram {
  name: string;
  /** What it is, from the list (`what`). */
  what: string;
  /** The paths of the entry missing here (empty when it is installed). */
  missing(): string[];
  /** `apt-get install …` and the variable that may point elsewhere. */
  install: string;
}

/** The list's entry as a program to check; `entry` defaults to the one named `name`. */
export function systemProgram(name: string, entry = listEntry(name)): SystemProgram {
  const variable = entry.env?.split('/')[0];
  return {
    name: entry.name,
    what: entry.what,
    missing: () => missingPaths(entry),
    install: `apt-get install ${entry.debian.join(' ')}${variable ? ` (or set ${variable})` : ''}`,
  };
}

function listEntry(name: string): SystemRequirement {
  const entry = systemRequirements().find((candidate) => candidate.name === name);
  if (!entry) throw new Error(`deploy/ci/system-packages.json has no entry named "${name}"`);
  return entry;
}

/** Why `name` cannot run on this machine (what is missing and what to install), or undefined. */
export function systemProgramMissing(name: string, entry = listEntry(name)): string | undefined {
  const program = systemProgram(name, entry);
  const missing = program.missing();
  if (missing.length === 0) return undefined;
  return `${program.what} is not installed (missing ${missing.join(', ')}): ${program.install}`;
}

/** Throws, naming the Debian packages, when the program `fixture` runs is missing. */
export function requireSystemProgram(name: string, fixture: string): void {
  const missing = systemProgramMissing(name);
  if (missing) throw new Error(`${fixture}: ${missing}`);
}

/**
 * For `describe.runIf`: whether a suite needing `name` runs here. Left out with a line saying what
 * to install; under CI=true (.ci/run, the GitHub workflow) a missing program fails the run instead.
 */
export function suiteCanRun(name: string, suite: string): boolean {
  const missing = systemProgramMissing(name);
  if (missing && process.env.CI === 'true') throw new Error(`${suite}: ${missing}`);
  if (missing) console.warn(`${suite} left out: ${missing}`);
  return missing === undefined;
}
