import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findFreePort,
  freeDevPorts,
  type ManagedProcess,
  repositoryRoot,
  startNodeProcess,
  waitUntilReady,
} from '../src/processes.js';

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

/** A listener on `port`, or undefined when something else holds it already (it is taken either way). */
async function occupy(port: number): Promise<Server | undefined> {
  const server = createServer();
  return new Promise((done) => {
    server.once('error', () => done(undefined));
    server.listen(port, '127.0.0.1', () => done(server));
  });
}

async function canListen(port: number): Promise<boolean> {
  const server = await occupy(port);
  if (server === undefined) return false;
  await new Promise((done) => server.close(done));
  return true;
}

describe('pnpm dev', () => {
  it('a taken port stops it at once with one line naming the port, its variable and the way out; nothing starts', async () => {
    const ports = await freeDevPorts();
    // The port it tried and the one 100 above it (a second `pnpm dev` moved by 100, say): the
    // example must name ports that are free now, not just other ones.
    const squatters = await Promise.all(
      [Number(ports.ORDERS_PORT), Number(ports.ORDERS_PORT) + 100].map(occupy),
    );
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
      // The example moves every port by the same step, to ports that can all be bound now.
      const example = /AUTH_PORT=(\d+) ORDERS_PORT=(\d+) SPA_PORT=(\d+)/
        .exec(errorLines[0]!)!
        .slice(1)
        .map(Number);
      const shift = example[1]! - Number(ports.ORDERS_PORT);
      expect(shift).toBeGreaterThanOrEqual(200);
      expect(example).toEqual(
        [ports.AUTH_PORT, ports.ORDERS_PORT, ports.SPA_PORT].map((port) => Number(port) + shift),
      );
      for (const port of example) expect(await canListen(port), `port ${port} is free`).toBe(true);
      // …in the documentation's own form of the command (its example of other ports, in the
      // development guide the README links to).
      const readmeForm = /AUTH_PORT=\d+ ORDERS_PORT=\d+ SPA_PORT=\d+ ([^`]+ dev)`/.exec(
        ['README.md', 'docs/development.md']
          .map((file) => readFileSync(join(repositoryRoot, file), 'utf8'))
          .join('\n'),
      )?.[1];
      expect(readmeForm).toBe('npx -y pnpm@10.34.9 dev');
      expect(errorLines[0]).toContain(`SPA_PORT=${example[2]} ${readmeForm}`);
      expect(errorLines[0]).toContain(`Is \`${readmeForm}\` already running?`);
      expect(dev.output()).not.toMatch(/EADDRINUSE|\n\s+at /);
      // Checked before anything else: no secrets generated, no server started.
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await Promise.all(squatters.map((squatter) => new Promise((done) => squatter?.close(done))));
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

  it("takes the operator's seed overlay without rewriting it, names the providers and the directory it loaded, and records the orders settings for a start by hand", async () => {
    const ports = await freeDevPorts();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dev-')), 'data');
    mkdirSync(dataDir);
    // As docs/development.md writes it: JSON with comments, in the data folder, beside the seed.
    const overlay = `{
  // a second local instance as an upstream provider (docs/development.md)
  "identity_providers": [{ "id": "upstream", "issuer": "http://127.0.0.1:${await findFreePort()}",
    "client_id": "downstream", "client_secret": "${randomBytes(16).toString('hex')}",
    "scope": "openid profile email", "display_name": "Upstream" }],
  "users": [{ "sub": "u-bob", "username": "bob", "password": "${randomBytes(9).toString('base64url')}",
    "name": "Bob Example", "email": "bob@example.com" }]
}
`;
    writeFileSync(join(dataDir, 'seed.local.json'), overlay);
    const directoryPort = await findFreePort();
    const dev = launch({
      ...ports,
      DEV_DATA_DIR: dataDir,
      // Passed through to the auth server; nothing needs to listen there for the start.
      LDAP_URL: `ldap://127.0.0.1:${directoryPort}`,
      LDAP_BIND_DN: 'cn=reader,dc=example,dc=org',
      LDAP_BIND_PASSWORD: randomBytes(9).toString('base64url'),
      LDAP_USER_BASE_DN: 'ou=people,dc=example,dc=org',
    });
    await dev.waitForOutput(/Everything is running/);
    const [beforeBanner, banner] = dev.output().split('Everything is running') as [string, string];
    expect(beforeBanner).toMatch(/merged from .*seed\.local\.json: users u-bob; identity providers upstream/);
    expect(beforeBanner).toContain(
      `auth-server: seed applied (identity providers: upstream; directory: ldap://127.0.0.1:${directoryPort})`,
    );
    expect(banner).toMatch(/identity providers +upstream \(http:\/\/127\.0\.0\.1:/);
    expect(banner).toMatch(new RegExp(`directory +ldap://127\\.0\\.0\\.1:${directoryPort}`));

    // Merged into the generated seed; the overlay itself is left as the operator wrote it.
    const seed = JSON.parse(readFileSync(join(dataDir, 'dev-seed.json'), 'utf8'));
    expect(seed.users.map((user: { username: string }) => user.username)).toEqual(['alice', 'bob']);
    expect(seed.clients.map((client: { client_id: string }) => client.client_id)).toContain('orders-web');
    expect(readFileSync(join(dataDir, 'seed.local.json'), 'utf8')).toBe(overlay);
    const login = await fetch(`http://127.0.0.1:${ports.AUTH_PORT}/.well-known/openid-configuration`);
    expect(login.status).toBe(200);

    // The request lines after the banner name method, URL and status, with a readable time (one
    // that came in before the banner, a readiness check, included).
    const requestLines = () =>
      dev
        .output()
        .split('Everything is running')[1]!
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes('"res"'))
        .map((line) => JSON.parse(line) as { msg: string; responseTime: number });
    await expect.poll(() => requestLines().length).toBeGreaterThan(0);
    for (const line of requestLines()) {
      expect(line.msg).toMatch(/^[A-Z]+ \/\S* \d{3}$/);
      expect(String(line.responseTime)).toMatch(/^\d+(\.\d)?$/);
    }
    await dev.stop();

    // The orders service's settings are recorded as the auth server's, and each service runs by
    // hand with them (`pnpm dev:service <name>`), here with pnpm dev stopped.
    const recorded = JSON.parse(readFileSync(join(dataDir, 'orders.env.json'), 'utf8'));
    expect(recorded).toMatchObject({
      PORT: ports.ORDERS_PORT,
      OIDC_ISSUER: `http://localhost:${ports.AUTH_PORT}`,
    });
    expect(statSync(join(dataDir, 'orders.env.json')).mode & 0o077).toBe(0);
    const byHand = ['auth-server', 'orders'].map((service) => {
      const started = startNodeProcess(
        `${service} by hand`,
        '.',
        'scripts/dev-service.mjs',
        { DEV_DATA_DIR: dataDir },
        [service],
      );
      running.push(started);
      return started;
    });
    await waitUntilReady(byHand[0]!, `http://127.0.0.1:${ports.AUTH_PORT}/health/ready`);
    await waitUntilReady(byHand[1]!, `http://127.0.0.1:${ports.ORDERS_PORT}/health/ready`);
    await Promise.all(byHand.map((service) => service.stop()));
    expect(byHand.map((service) => service.child.exitCode)).toEqual([0, 0]);
  }, 240_000);

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

  it("Ctrl+C on the README's form (npx): every service stops gracefully and nothing is left; the status is pnpm's 0 or the shell's report of the Ctrl+C, as docs/development.md says", async () => {
    const ports = await freeDevPorts();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dev-')), 'data');
    const dev = spawn('npx', ['-y', 'pnpm@10.34.9', 'dev'], {
      cwd: repositoryRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        CI: 'true',
        DEV_DATA_DIR: dataDir,
        ...ports,
      },
      // The foreground process group a terminal gives the command, which Ctrl+C signals whole.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    dev.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
      dev.on('exit', (code, signal) => done({ code, signal })),
    );
    try {
      await expect.poll(() => output, { timeout: 110_000, interval: 500 }).toContain('Everything is running');
      process.kill(-dev.pid!, 'SIGINT');
      const { code, signal } = await exited;
      // npm's `sh -c` (dash) reports the Ctrl+C it saw once pnpm has exited 0 (docs/development.md).
      expect(code === 0 || signal === 'SIGINT', `exit ${code} ${signal}`).toBe(true);
    } finally {
      if (dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid!, 'SIGKILL');
    }
    for (const service of ['auth-server', 'orders']) {
      await expect
        .poll(() => output)
        .toMatch(new RegExp(`"service":"${service}".*"msg":"shutdown complete"`));
    }
    expect(output).not.toContain('ELIFECYCLE');
    for (const port of Object.values(ports))
      expect(await canListen(Number(port)), `port ${port} released`).toBe(true);
  }, 240_000);
});
