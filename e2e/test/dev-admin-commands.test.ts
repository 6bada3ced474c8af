import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpBrowser } from '../src/http-browser.js';
import {
  freeDevPorts,
  type ManagedProcess,
  runShell,
  type ShellResult,
  startDevLauncher,
} from '../src/processes.js';
import { authorizationCode } from '../src/protocol-flows.js';

/**
 * The auth server's `users` and `keys` commands against the database of a running `pnpm dev`, as the
 * READMEs write them: no DATABASE_URL, no KEY_ENCRYPTION_KEY. The running server owns the embedded
 * database and serves it to the command; a change is acted on at once and is on disk afterwards.
 */

const running: ManagedProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((process) => process.stop()));
});

/**
 * `pnpm --filter auth-server <command>` from the repository root, with no setting but DEV_DATA_DIR
 * (the test's `pnpm dev` keeps its data in a temporary folder); `input` goes to standard input.
 */
function adminCommand(dataDir: string, command: string, input = ''): Promise<ShellResult> {
  const line = `npx -y pnpm@10.34.9 --silent --filter auth-server ${command}`;
  return runShell(input === '' ? line : `printf '%s\\n' "$INPUT" | ${line}`, {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DEV_DATA_DIR: dataDir,
    INPUT: input,
  });
}

async function startDev(dataDir: string, ports: Record<string, string>): Promise<ManagedProcess> {
  const dev = startDevLauncher(dataDir, ports);
  running.push(dev);
  await dev.waitForOutput(/Everything is running/);
  return dev;
}

describe('users and keys commands in development', () => {
  it('while pnpm dev runs, `users disable alice` (no settings) ends her sign-in at once; it is on disk after pnpm dev stops, and after a restart (which applies the seed file again) alice is still disabled and a user added meanwhile is enabled and signs in', async () => {
    const ports = await freeDevPorts();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dev-admin-')), 'data');
    const dev = await startDev(dataDir, ports);
    const issuer = `http://127.0.0.1:${ports.AUTH_PORT}`;
    const alice = {
      username: 'alice',
      password: (
        JSON.parse(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8')) as { alicePassword: string }
      ).alicePassword,
    };
    const signIn = (browser: HttpBrowser, user = alice) =>
      authorizationCode(browser, {
        authorizeAt: issuer,
        clientId: 'orders-web',
        redirectUri: `http://localhost:${ports.ORDERS_PORT}/signin-oidc`,
        scope: 'openid',
        user,
      });
    const bob = { username: 'bob', password: 'a long development passphrase' };
    const signedIn = new HttpBrowser();
    await signIn(signedIn);

    const disabled = await adminCommand(dataDir, 'users disable alice');
    expect(disabled, disabled.stderr).toMatchObject({ status: 0 });
    expect(disabled.stdout).toMatch(/^disabled alice; ended 1 session\(s\)/);
    expect(disabled.stderr).toContain('no DATABASE_URL: using the pnpm dev database and settings');

    // The running server acts on it: neither her session nor her password signs her in any more.
    await expect(signIn(signedIn)).rejects.toThrow(/no redirect to the client/);
    await expect(signIn(new HttpBrowser())).rejects.toThrow(/no redirect to the client/);
    // `keys` reads the dev key-encryption key itself: listing decrypts the server's signing keys.
    const keys = await adminCommand(dataDir, 'keys list');
    expect(keys, keys.stderr).toMatchObject({ status: 0 });
    expect(keys.stdout).toMatch(/ES256\s+activates=/);
    const added = await adminCommand(dataDir, 'users add bob', bob.password);
    expect(added, added.stderr).toMatchObject({ status: 0 });

    await dev.stop();
    // pnpm dev stopped: the command opens the folder itself and finds what it wrote through the server.
    expect((await adminCommand(dataDir, 'users show alice')).stdout).toMatch(/\tdisabled=true\t/);

    const again = await startDev(dataDir, ports);
    // The seed applied at this start neither re-enables alice, whom the operator disabled, nor
    // disables bob, whom the seed file does not name: both are the operator's decisions.
    const list = await adminCommand(dataDir, 'users list');
    expect(list, list.stderr).toMatchObject({ status: 0 });
    expect(list.stdout).toMatch(/^alice\t.*\tdisabled=true\t/m);
    expect(list.stdout).toMatch(/^bob\t.*\tdisabled=false\t/m);
    await expect(signIn(new HttpBrowser())).rejects.toThrow(/no redirect to the client/);
    expect((await signIn(new HttpBrowser(), bob)).code).toEqual(expect.any(String));
    await again.stop();
    // Two starts of pnpm dev and six commands, each through npx and pnpm: minutes on a busy machine.
  }, 360_000);
});
