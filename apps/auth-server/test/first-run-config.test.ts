import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { DatabaseStartError } from '../src/db/errors.js';
import { readSeedFile, SeedError } from '../src/seed.js';
import { startTestApp, TEST_KEY_ENCRYPTION_KEY } from './helpers/app.js';
import { captureLogs } from './helpers/security.js';

const development = { NODE_ENV: 'development', DATABASE_URL: 'pglite://memory' };

describe('configuration errors are one line naming the fix', () => {
  it('an unset NODE_ENV is production, as in the orders app: KEY_ENCRYPTION_KEY is then required', () => {
    expect(() => loadConfig({ DATABASE_URL: 'pglite://memory' })).toThrow(
      /^KEY_ENCRYPTION_KEY is required when NODE_ENV=production/,
    );
    const config = loadConfig({
      DATABASE_URL: 'pglite://memory',
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    });
    expect(config.nodeEnv).toBe('production');
  });

  it('LOG_LEVEL lists the allowed values', () => {
    expect(() => loadConfig({ ...development, LOG_LEVEL: 'verbose' })).toThrow(
      new ConfigError(
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
      ),
    );
  });

  it('relative SEED_FILE and pglite:// paths are resolved against the directory pnpm was started from (INIT_CWD)', () => {
    const config = loadConfig({
      ...development,
      INIT_CWD: '/home/someone/project',
      DATABASE_URL: 'pglite://.data/auth',
      SEED_FILE: './seed.json',
    });
    expect(config.seedFile).toBe('/home/someone/project/seed.json');
    expect(config.database).toEqual({ driver: 'pglite', dataDir: '/home/someone/project/.data/auth' });
  });

  it('PORT without ISSUER warns that discovery names another address', () => {
    expect(loadConfig({ ...development, PORT: '4555' }).warnings).toEqual([
      expect.stringMatching(/^PORT is 4555 but ISSUER is not set.*ISSUER=http:\/\/localhost:4555/),
    ]);
    expect(loadConfig({ ...development, PORT: '4555', ISSUER: 'http://localhost:4555' }).warnings).toEqual(
      [],
    );
    expect(loadConfig(development).warnings).toEqual([]);
  });

  it('invalid seed JSON names the resolved file, line and column', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'seed-')), 'seed.json');
    writeFileSync(file, '{\n  "clients": [\n    {"client_id": "x" "y"}\n  ]\n}\n');
    const error = await readSeedFile(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SeedError);
    expect((error as Error).message).toMatch(
      new RegExp(`^SEED_FILE ${file}:3:23 is not valid JSON: comma expected`),
    );
  });

  it('a database that cannot be opened fails the start with a line starting DATABASE_URL:', async () => {
    const config = loadConfig({ ...development, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    const app = await buildApp(config, { logger: false }).catch((error: unknown) => error);
    expect(app).toBeInstanceOf(DatabaseStartError);
    expect((app as Error).message).toMatch(
      /^DATABASE_URL: cannot (open|migrate) PostgreSQL at 127\.0\.0\.1:1\/none: /,
    );
  });

  it('an empty seed warns at start that no client is registered', async () => {
    const logs = captureLogs('warn');
    const { close } = await startTestApp({ seed: { clients: [] }, logger: logs.logger });
    await close();
    expect(logs.text()).toContain('registers no client');
  });

  it('keys hash-secret refuses without KEY_ENCRYPTION_KEY unless NODE_ENV=development', () => {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', 'hash-secret'], {
        cwd: join(import.meta.dirname, '..'),
        input: 'a-secret\n',
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', ...env },
      });
    const refused = run({});
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^keys: KEY_ENCRYPTION_KEY is required/);
    expect(refused.stdout).toBe('');
    const developmentRun = run({ NODE_ENV: 'development' });
    expect(developmentRun.status).toBe(0);
    expect(developmentRun.stdout).toMatch(/\S/);
  });
});
