import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandEnvironment, DEV_SETTINGS_FILE } from '../src/cli/command-environment.js';
import { openDatabase } from '../src/db/client.js';

/**
 * Which database the operator commands (`users`, `keys`) open: DATABASE_URL when given, else the
 * one `pnpm dev` records; and never a private copy of an embedded database another process has
 * open (that copy's writes would be lost). e2e/test/dev-admin-commands.test.ts runs them against a
 * running `pnpm dev`.
 */
const scratch = mkdtempSync(join(tmpdir(), 'admin-commands-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function users(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/users.ts', ...args], {
    cwd: join(import.meta.dirname, '..'),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.on('close', (code) => done({ code, stdout, stderr })),
  );
}

describe('the database of the operator commands', () => {
  it('without DATABASE_URL: the settings pnpm dev recorded, under any variable set explicitly', () => {
    const devData = join(scratch, 'dev-data');
    const notes: string[] = [];
    expect(commandEnvironment({ DEV_DATA_DIR: devData }, (line) => notes.push(line))).toEqual({
      DEV_DATA_DIR: devData,
    });
    const recorded = {
      DATABASE_URL: 'pglite:///somewhere/auth-server',
      KEY_ENCRYPTION_KEY: 'dev-kek',
      ISSUER: 'x',
    };
    mkdirSync(devData, { recursive: true });
    writeFileSync(join(devData, DEV_SETTINGS_FILE), JSON.stringify(recorded));
    expect(
      commandEnvironment({ DEV_DATA_DIR: devData, ISSUER: 'http://localhost:4100' }, (line) =>
        notes.push(line),
      ),
    ).toEqual({
      ...recorded,
      DEV_DATA_DIR: devData,
      ISSUER: 'http://localhost:4100',
    });
    expect(notes).toEqual([
      `no DATABASE_URL: using the pnpm dev database and settings (${join(devData, DEV_SETTINGS_FILE)})`,
    ]);
    // DATABASE_URL given: the environment exactly as it is, the pnpm dev settings unread.
    const given = { DEV_DATA_DIR: devData, DATABASE_URL: 'postgres://db/auth' };
    expect(commandEnvironment(given, (line) => notes.push(line))).toBe(given);
    expect(notes).toHaveLength(1);
  });

  it('refuses in one line, exit 1, an embedded database that another process has open without sharing it', async () => {
    const dataDir = join(scratch, 'db');
    const server = await openDatabase({ driver: 'pglite', dataDir });
    try {
      const result = await users(['list'], {
        DATABASE_URL: `pglite://${dataDir}`,
        NODE_ENV: 'production',
        KEY_ENCRYPTION_KEY: 'x'.repeat(43),
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `users: the PGlite database ${dataDir} is open in process ${process.pid}, which does not share it: stop that process first (if no process ${process.pid} is yours, delete ${dataDir}.lock)`,
      ]);
    } finally {
      await server.close();
    }
  });
});
