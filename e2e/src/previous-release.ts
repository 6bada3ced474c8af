import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryRoot } from './processes.js';

/**
 * The release before this tree, as `deploy/previous-release` names it: a tag (`vX.Y.Z`) and its
 * commit. The commit is what the rolling-upgrade suite checks out, since a CI checkout may hold
 * the history but not the tags.
 */
export interface PreviousRelease {
  tag: string;
  commit: string;
}

export function previousRelease(): PreviousRelease {
  const [tag, commit] = readFileSync(join(repositoryRoot, 'deploy/previous-release'), 'utf8')
    .trim()
    .split(/\s+/);
  if (!tag || !commit || !/^[0-9a-f]{40}$/.test(commit))
    throw new Error('deploy/previous-release must hold "<tag> <40-hex commit>"');
  return { tag, commit };
}

/** Why the release's commit cannot be checked out here (a shallow clone), or undefined when it can. */
export function previousReleaseMissing({ tag, commit }: PreviousRelease): string | undefined {
  const found = spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], {
    cwd: repositoryRoot,
    stdio: 'ignore',
  });
  if (found.status === 0) return undefined;
  return `the previous release ${tag} (commit ${commit}) is not in this checkout's git history (a shallow clone?): run git fetch --unshallow, or git fetch origin ${commit}`;
}

export interface ReleaseCheckout {
  root: string;
  remove(): Promise<void>;
}

/**
 * `git archive` of the release's commit in a temporary folder, dependencies installed from the pnpm
 * store (offline: the store holds them after this tree's install; online only when it does not).
 * Install scripts are skipped: the optional Kerberos binding is not needed to serve.
 */
export async function checkOutRelease({ commit }: PreviousRelease): Promise<ReleaseCheckout> {
  const root = await mkdtemp(join(tmpdir(), 'previous-release-'));
  const remove = () => rm(root, { recursive: true, force: true });
  try {
    execFileSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${root}"`], {
      cwd: repositoryRoot,
    });
    const pnpm = (mode: string) =>
      spawnSync('npx', ['-y', 'pnpm@10.34.9', 'install', '--frozen-lockfile', '--ignore-scripts', mode], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
      });
    let install = pnpm('--offline');
    if (install.status !== 0) install = pnpm('--prefer-offline');
    if (install.status !== 0)
      throw new Error(`pnpm install of the previous release failed:\n${install.stdout}${install.stderr}`);
    return { root, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
