/**
 * The SPA's server logs in the apps' shape: pino JSON lines with a numeric level,
 * a time and the service's name, so `pnpm dev` formats its lines like the two apps'.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

describe('the SPA server process', () => {
  it('logs pino JSON lines when it starts and when it stops', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: new URL('..', import.meta.url).pathname,
      env: { ...process.env, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Array<Record<string, unknown>> = [];
    const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const listening = new Promise<void>((resolve) =>
      reader.on('line', (line) => {
        lines.push(JSON.parse(line) as Record<string, unknown>);
        if (lines.at(-1)?.msg === 'spa listening') resolve();
      }),
    );
    await listening;
    child.kill('SIGTERM');
    await once(child, 'exit');

    expect(lines[0]).toMatchObject({ level: 30, name: 'spa', msg: 'spa listening', clientId: 'orders-spa' });
    expect(lines[0]?.time).toEqual(expect.any(Number));
    expect(lines[0]?.port).toEqual(expect.any(Number));
    expect(lines.at(-1)).toMatchObject({
      level: 30,
      name: 'spa',
      msg: 'spa shutting down',
      signal: 'SIGTERM',
    });
  }, 30_000);
});
