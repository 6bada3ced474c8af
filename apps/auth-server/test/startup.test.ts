import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const appDir = fileURLToPath(new URL('..', import.meta.url));

/** Runs `src/server.ts` as the start command does and collects what it prints. */
function runServer(
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: appDir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        PORT: '0',
        HOST: '127.0.0.1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe('graceful shutdown', () => {
  it('on SIGTERM answers readiness 503 during the pause, then exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: appDir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: 'pglite://memory',
        SHUTDOWN_PAUSE_MS: '1500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const killer = setTimeout(() => child.kill('SIGKILL'), 55_000);
    try {
      // The listening address is in the "Server listening at" log line (PORT=0 picks a free port).
      const base = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (chunk) => {
          output += chunk;
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match?.[1]) resolve(match[1]);
        });
        child.on('exit', () => reject(new Error(`server exited before listening: ${output}`)));
      });
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);

      child.kill('SIGTERM');
      // During the pause the listener is still open: readiness says 503, liveness 200.
      let ready = 200;
      for (let attempt = 0; attempt < 50 && ready === 200; attempt++) {
        ready = (await fetch(`${base}/health/ready`)).status;
      }
      expect(ready).toBe(503);
      expect((await fetch(`${base}/health/live`)).status).toBe(200);

      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // A child process that initialises an embedded database, on a possibly busy machine.
  }, 60_000);
});

describe('start-up failures: one clear line, non-zero exit, no stack', () => {
  it('names a missing DATABASE_URL', async () => {
    const result = await runServer({});
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('auth-server: cannot start: DATABASE_URL is required');
  });

  it('names an invalid PORT', async () => {
    const result = await runServer({ DATABASE_URL: 'pglite://memory', PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/PORT is invalid/);
    expect(result.stderr).not.toMatch(/\s+at /);
  });

  it('names the seed member that is not allowed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'auth-seed-'));
    const seedFile = join(dir, 'seed.json');
    await writeFile(
      seedFile,
      JSON.stringify({ clients: [{ client_id: 'legacy', client_secret: 'x', grant_types: ['password'] }] }),
    );
    const result = await runServer({ DATABASE_URL: 'pglite://memory', SEED_FILE: seedFile });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/clients\[0\] \(legacy\): grant type "password" is refused/);
  });
});
