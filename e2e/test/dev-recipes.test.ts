import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { expectLoginPage } from '../src/flows.js';
import { findFreePort, freeDevPorts, type ManagedProcess, startNodeProcess } from '../src/processes.js';

/**
 * The development recipes of docs/development.md ("Trying the other systems locally"), run as
 * written beside one `pnpm dev`: `pnpm dev:traces` (a trace viewer), `pnpm dev:upstream` (a second
 * instance as an upstream provider, on 127.0.0.1), `pnpm dev:directory` (OpenLDAP with one
 * person), then `pnpm dev` with the directory's settings and OTEL_EXPORTER_OTLP_ENDPOINT. A
 * person signs in at the orders app in Chromium through the upstream provider, another with the
 * directory's person, and one sign-in's whole path is found in the trace files by its
 * interaction.id. Every script runs on free ports with its data in a temporary DEV_DATA_DIR.
 */

const running: ManagedProcess[] = [];
let dataDir: string;
let ports: Record<'AUTH_PORT' | 'ORDERS_PORT' | 'SPA_PORT', string>;
let dev: ManagedProcess;
let browser: TestBrowser | undefined;

function startScript(name: string, cwd: string, script: string, env: Record<string, string>): ManagedProcess {
  const started = startNodeProcess(name, cwd, script, { DEV_DATA_DIR: dataDir, ...env });
  running.push(started);
  return started;
}

/** `KEY=value` lines, as `env $(cat .data/directory.env)` reads them. */
function readEnvFile(file: string): Record<string, string> {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

beforeAll(async () => {
  dataDir = join(mkdtempSync(join(tmpdir(), 'dev-recipes-')), 'data');
  mkdirSync(dataDir);
  ports = await freeDevPorts();
  const tracesPort = String(await findFreePort());
  const traces = startScript('dev:traces', '.', 'scripts/dev-traces.mjs', { TRACES_PORT: tracesPort });
  const upstream = startScript('dev:upstream', '.', 'scripts/dev-upstream.mjs', {
    UPSTREAM_PORT: String(await findFreePort()),
    AUTH_PORT: ports.AUTH_PORT,
  });
  const directory = startScript('dev:directory', 'apps/auth-server', 'scripts/dev-directory.ts', {});
  await Promise.all([
    traces.waitForOutput(/receiving OTLP\/HTTP traces/),
    upstream.waitForOutput(/upstream provider ready/),
    directory.waitForOutput(/Ctrl\+C stops the directory/),
  ]);
  dev = startScript('pnpm dev', '.', 'scripts/dev.mjs', {
    CI: 'true',
    ...ports,
    ...readEnvFile(join(dataDir, 'directory.env')),
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${tracesPort}`,
    OTEL_BSP_SCHEDULE_DELAY: '200',
  });
  await dev.waitForOutput(/Everything is running/);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  // pnpm dev first: its auth server talks to the others.
  await dev?.stop();
  await Promise.all(running.map((process) => process.stop()));
  if (dataDir) rmSync(dirname(dataDir), { recursive: true, force: true });
});

const issuer = () => `http://localhost:${ports.AUTH_PORT}`;
const ordersApp = () => `http://localhost:${ports.ORDERS_PORT}/app`;

/** From the orders app's Sign in to the app again, signed in as `name`; `act` is the login page's part. */
async function signInAtOrders(name: string, act: (browser: TestBrowser) => Promise<void>): Promise<void> {
  browser = await launchBrowser();
  const { page } = browser;
  await page.goto(ordersApp());
  await page.getByRole('link', { name: 'Sign in' }).click();
  await expectLoginPage(page, issuer());
  await act(browser);
  await page.waitForURL(ordersApp());
  await expect.poll(() => page.locator('#user-name').textContent()).toBe(name);
  await browser.close();
  browser = undefined;
}

describe('development recipes beside pnpm dev', () => {
  it('pnpm dev names the upstream provider and the directory it loaded', () => {
    const banner = dev.output().split('Everything is running')[1]!;
    expect(banner).toMatch(/identity providers +upstream \(http:\/\/127\.0\.0\.1:\d+\)/);
    expect(banner).toMatch(/directory +ldap:\/\/127\.0\.0\.1:\d+/);
  });

  it('a person signs in at the orders app through the second local instance (its cookies apart: another host)', async () => {
    const password = JSON.parse(readFileSync(join(dataDir, 'upstream', 'secrets.json'), 'utf8')).umaPassword;
    await signInAtOrders('Uma Upstream', async ({ page }) => {
      await page.locator('[data-sign-in="idp:upstream"]').click();
      await page.waitForURL((url) => url.hostname === '127.0.0.1' && url.pathname.endsWith('/login'));
      await page.getByLabel('Username').fill('uma');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    });
  });

  it("a person signs in with the local directory's account", async () => {
    const person = JSON.parse(readFileSync(join(dataDir, 'directory-person.json'), 'utf8'));
    await signInAtOrders('Grace Directory', async ({ page }) => {
      await page.getByLabel('Username').fill(person.username);
      await page.getByLabel('Password').fill(person.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    });
  });

  it("the trace viewer wrote one file per trace, and one sign-in's path is found by its interaction.id", async () => {
    const tracesDir = join(dataDir, 'traces');
    const spansIn = (file: string) =>
      readFileSync(join(tracesDir, file), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(
          (line) =>
            JSON.parse(line) as {
              traceId: string;
              name: string;
              service: string;
              attributes: Record<string, unknown>;
            },
        );
    const loginPosts = () =>
      readdirSync(tracesDir)
        .flatMap(spansIn)
        .filter((span) => span.service === 'auth-server' && span.name === 'POST /interaction/:id/login');
    // The directory sign-in's POST (the last one): its LDAP spans are in the same file.
    await expect.poll(() => loginPosts().some((span) => span.attributes['interaction.id'])).toBe(true);
    for (const file of readdirSync(tracesDir)) {
      expect(file).toMatch(/^[0-9a-f]{32}\.jsonl$/);
      expect(new Set(spansIn(file).map((span) => span.traceId))).toEqual(new Set([file.slice(0, 32)]));
    }
    const interactionId = String(loginPosts().at(-1)!.attributes['interaction.id']);
    // As the docs search: every file holding the id is one request of that sign-in.
    const files = readdirSync(tracesDir).filter((file) =>
      readFileSync(join(tracesDir, file), 'utf8').includes(`"interaction.id":"${interactionId}"`),
    );
    const requests = files.flatMap(spansIn).filter((span) => span.attributes['http.route'] !== undefined);
    expect(requests.map((span) => span.name)).toEqual(
      expect.arrayContaining(['GET /authorize', 'GET /interaction/:id/login', 'POST /interaction/:id/login']),
    );
    expect(files.flatMap(spansIn).some((span) => span.name === 'ldap.bind')).toBe(true);
    expect(files.flatMap(spansIn).some((span) => span.name.startsWith('pglite.query:'))).toBe(true);
  });
});
