import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The README's install line, run as written on a machine that has never seen this CLI: a fresh HOME
 * and an empty npm global folder (npm_config_prefix), whose `bin` is on PATH as it is wherever npm
 * runs from. Afterwards `orders` is a command the shell finds.
 */
const repositoryRoot = resolve(import.meta.dirname, '../../..');
const scratch = mkdtempSync(join(tmpdir(), 'orders-cli-install-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function installLine(): string {
  const readme = readFileSync(join(repositoryRoot, 'packages/cli/README.md'), 'utf8');
  const lines = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) => block[1]!.split('\n'));
  const install = lines.filter((line) => /\bnpm link\b/.test(line));
  expect(install).toHaveLength(1);
  return install[0]!.replace(/\s+#.*$/, '').trim();
}

describe('the README install line', () => {
  it('puts `orders` on PATH on a fresh machine', () => {
    const prefix = join(scratch, 'npm-global');
    const env = {
      HOME: join(scratch, 'home'),
      npm_config_prefix: prefix,
      npm_config_update_notifier: 'false',
      PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`,
    };
    execFileSync('sh', ['-c', installLine()], { cwd: repositoryRoot, env, stdio: 'pipe' });

    const found = spawnSync('sh', ['-c', 'command -v orders && orders help'], { cwd: scratch, env });
    expect(found.stderr.toString()).toBe('');
    expect(found.status).toBe(0);
    const [path, ...help] = found.stdout.toString().split('\n');
    expect(path).toBe(join(prefix, 'bin', 'orders'));
    expect(help.join('\n')).toContain('Usage: orders [options] <command>');

    // Installed, its hints name the command; run by path before that, they name the path.
    const configDir = join(scratch, 'config');
    const signedOut = { ...env, ORDERS_ISSUER: 'http://127.0.0.1:9', ORDERS_CLI_CONFIG_DIR: configDir };
    const installed = spawnSync('sh', ['-c', 'orders whoami'], { cwd: scratch, env: signedOut });
    expect(installed.stderr.toString()).toContain('Run `orders login`.');
    const byPath = spawnSync(process.execPath, ['packages/cli/bin/orders.js', 'whoami'], {
      cwd: repositoryRoot,
      env: signedOut,
    });
    expect(byPath.stderr.toString()).toContain('Run `node packages/cli/bin/orders.js login`.');
  });
});
