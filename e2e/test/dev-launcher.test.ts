import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freeDevPorts, type ManagedProcess, repositoryRoot, startNodeProcess } from '../src/processes.js';

/**
 * `pnpm dev` (scripts/dev.mjs) as a newcomer runs it: every port checked
 * before anything starts, loopback only, a progress line per step, then the banner. Its data
 * (secrets, databases, logs) goes to a temporary DEV_DATA_DIR, and its ports are free ones, so it
 * neither touches the repository's .data/ nor collides with anyone's running `pnpm dev`.
 */

const running: ManagedProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((process) => process.stop()));
});

function launch(env: Record<string, string>): ManagedProcess {
  const dev = startNodeProcess('pnpm dev', '.', 'scripts/dev.mjs', { CI: 'true', ...env });
  running.push(dev);
  return dev;
}

describe('pnpm dev', () => {
  it('a taken port stops it at once with one line naming the port, its variable and the way out; nothing starts', async () => {
    const ports = await freeDevPorts();
    const squatter: Server = createServer();
    await new Promise<void>((done) => squatter.listen(Number(ports.ORDERS_PORT), '127.0.0.1', done));
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dev-')), 'data');
    try {
      const dev = launch({ ...ports, DEV_DATA_DIR: dataDir });
      expect(await dev.exited).toBe(1);
      const errorLines = dev
        .output()
        .split('\n')
        .filter((line) => line.includes('cannot start'));
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toContain(`${ports.ORDERS_PORT} (orders, ORDERS_PORT) is already in use`);
      // The example names other ports than the taken ones: each moved by 100.
      expect(errorLines[0]).toContain(`ORDERS_PORT=${Number(ports.ORDERS_PORT) + 100}`);
      expect(errorLines[0]).not.toContain(`ORDERS_PORT=${ports.ORDERS_PORT} `);
      // …in the documentation's own form of the command (its example of other ports, in the
      // development guide the README links to).
      const readmeForm = /AUTH_PORT=\d+ ORDERS_PORT=\d+ SPA_PORT=\d+ ([^`]+ dev)`/.exec(
        ['README.md', 'docs/development.md']
          .map((file) => readFileSync(join(repositoryRoot, file), 'utf8'))
          .join('\n'),
      )?.[1];
      expect(readmeForm).toBe('npx -y pnpm@10.34.9 dev');
      expect(errorLines[0]).toContain(`SPA_PORT=${Number(ports.SPA_PORT) + 100} ${readmeForm}`);
      expect(errorLines[0]).toContain(`Is \`${readmeForm}\` already running?`);
      expect(dev.output()).not.toMatch(/EADDRINUSE|\n\s+at /);
      // Checked before anything else: no secrets generated, no server started.
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((done) => squatter.close(done));
    }
  });

  it('shows a line per step, then the banner; services listen on loopback only; logs are JSON lines under CI', async () => {
    const ports = await freeDevPorts();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dev-')), 'data');
    const dev = launch({ ...ports, DEV_DATA_DIR: dataDir });
    await dev.waitForOutput(/Everything is running/);
    const beforeBanner = dev.output().split('Everything is running')[0]!;
    const steps = [
      /Checking that ports .* are free/,
      /Generating dev-only secrets/,
      /Writing the development seed/,
      /Starting the authorization server/,
      /auth-server: database migrated/,
      /auth-server: seed applied/,
      /auth-server: ready/,
      /Starting the orders service/,
      /orders: ready/,
    ];
    let position = 0;
    for (const step of steps) {
      const found = beforeBanner.slice(position).search(step);
      expect(found, `step ${step} in order`).toBeGreaterThanOrEqual(0);
      position += found;
    }
    expect(beforeBanner).toMatch(/spa: ready/);
    // No raw service log before the banner: only the launcher's own lines.
    expect(
      beforeBanner.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('[dev]')),
    ).toEqual([]);

    for (const port of Object.values(ports)) {
      expect((await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' })).status).toBeLessThan(500);
      const external = Object.values(networkInterfaces())
        .flat()
        .find((address) => address && address.family === 'IPv4' && !address.internal);
      if (external) {
        await expect(fetch(`http://${external.address}:${port}/`)).rejects.toThrow();
      }
    }

    // After the banner, service logs follow as JSON lines naming their service.
    await fetch(`http://127.0.0.1:${ports.AUTH_PORT}/no-such-page`);
    await expect
      .poll(() =>
        dev
          .output()
          .split('Everything is running')[1]!
          .split('\n')
          .some((line) => line.startsWith('{"service":"auth-server"')),
      )
      .toBe(true);

    await dev.stop();
    expect(dev.child.exitCode).toBe(0);
  });

  it('Ctrl+C (SIGINT to the whole process group) stops each service once and pnpm exits 0, without ELIFECYCLE; one terminal line per request', async () => {
    const ports = await freeDevPorts();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dev-')), 'data');
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: 'true', ...ports };
    // pnpm itself (the file npx runs), so that its own exit code is the one observed.
    // pnpm itself (where npx keeps it), so that its own exit code is the one observed.
    const pnpm = execFileSync('npx', ['-y', '-p', 'pnpm@10.34.9', 'sh', '-c', 'command -v pnpm'], {
      cwd: repositoryRoot,
      env,
    })
      .toString()
      .trim();
    // A process group of its own, as a terminal gives the command it runs in the foreground.
    const dev = spawn(pnpm, ['dev'], {
      cwd: repositoryRoot,
      env: { ...env, DEV_DATA_DIR: dataDir },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    dev.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => dev.on('exit', (code) => done(code)));
    try {
      await expect.poll(() => output, { timeout: 110_000, interval: 500 }).toContain('Everything is running');
      await fetch(`http://127.0.0.1:${ports.AUTH_PORT}/no-such-page-${ports.AUTH_PORT}`);
      const requestLines = () =>
        output
          .split('\n')
          .filter((line) => line.includes(`no-such-page-${ports.AUTH_PORT}`) && line.includes('"service"'));
      await expect.poll(requestLines).toHaveLength(1);
      expect(JSON.parse(requestLines()[0]!)).toMatchObject({
        service: 'auth-server',
        msg: `GET /no-such-page-${ports.AUTH_PORT} 404`,
        res: { statusCode: 404 },
      });

      process.kill(-dev.pid!, 'SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (dev.exitCode === null) process.kill(-dev.pid!, 'SIGKILL');
    }
    expect(output).not.toContain('ELIFECYCLE');
    expect(output).not.toContain('shutdown already in progress');
    for (const service of ['auth-server', 'orders']) {
      expect(output).toMatch(new RegExp(`"service":"${service}".*"msg":"shutdown complete"`));
    }
    // The start (up to 110 s on a busy machine) and a graceful stop.
  }, 240_000);
});
