import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBrowser } from '../src/http-browser.js';
import {
  type AddedInstance,
  basicAuthorization,
  type Instances,
  postForm,
  startInstances,
  WEB_TEST_REDIRECT_URI,
} from '../src/instances.js';
import { createFreshDatabase, type FreshDatabase } from '../src/postgres.js';
import {
  checkOutRelease,
  previousRelease,
  previousReleaseMissing,
  type ReleaseCheckout,
} from '../src/previous-release.js';
import { type ManagedProcess, repositoryRoot } from '../src/processes.js';
import { authorizationCode, ordersSignIn, redeemCode, refresh } from '../src/protocol-flows.js';
import type { RoundRobinProxy } from '../src/round-robin-proxy.js';

/**
 * A rolling upgrade (docs/upgrades.md): two auth-server and two orders instances of the previous
 * release (deploy/previous-release) on one PostgreSQL database per app, behind round-robin
 * gateways. Under a steady load of sign-ins, refreshes, introspections, orders and BFF calls, each
 * instance in turn is replaced by one of this tree: start the new one (the first new auth server
 * applies this release's migrations while the old ones serve), put it behind the gateway, take the
 * old one out, stop it (SIGTERM, graceful). Nothing may fail, no session may be lost, and every
 * refresh chain must still rotate afterwards.
 */

const release = previousRelease();
const missing = previousReleaseMissing(release);
// A shallow CI checkout must not pass by skipping the upgrade: it fails with the line that says why.
if (missing && process.env.CI === 'true') throw new Error(`rolling upgrade: ${missing}`);
if (missing) console.warn(`rolling-upgrade suite left out: ${missing}`);

const WORKERS = 3;
const LOAD_BEFORE_MS = 3000;
const LOAD_AFTER_MS = 3000;
// Four process starts and four graceful stops under load: a busy machine needs minutes.
const UPGRADE_TIMEOUT_MS = 300_000;

let checkout: ReleaseCheckout;
let authDatabase: FreshDatabase;
let ordersDatabase: FreshDatabase;
let stack: Instances;

beforeAll(async () => {
  if (missing) return;
  checkout = await checkOutRelease(release);
  authDatabase = await createFreshDatabase('e2e_rolling_auth');
  ordersDatabase = await createFreshDatabase('e2e_rolling_orders');
  // A short drain pause, as a load balancer needs to notice readiness 503 (here it is told at once).
  const drain = { SHUTDOWN_PAUSE_MS: '500' };
  stack = await startInstances({
    releaseRoot: checkout.root,
    authDatabaseUrl: authDatabase.url,
    ordersDatabaseUrl: ordersDatabase.url,
    authCount: 2,
    ordersCount: 2,
    ordersGateway: true,
    gatewayKind: 'http',
    // Short, so the BFF refreshes its users' tokens during the upgrade too.
    accessTokenTtl: 6,
    authEnv: drain,
    ordersEnv: drain,
  });
}, 240_000);
afterAll(async () => {
  await stack?.stop();
  await authDatabase?.drop();
  await ordersDatabase?.drop();
  await checkout?.remove();
});

interface Load {
  counts: Record<string, number>;
  failures: string[];
  chains: string[];
}

/** Runs `operation`, counting it under `kind`; an unexpected answer or a thrown error is a failure. */
async function measured<T>(load: Load, kind: string, operation: () => Promise<T>, ok: (value: T) => boolean) {
  load.counts[kind] = (load.counts[kind] ?? 0) + 1;
  try {
    const value = await operation();
    if (!ok(value)) load.failures.push(`${kind}: ${JSON.stringify(value).slice(0, 300)}`);
    return value;
  } catch (error) {
    load.failures.push(`${kind}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

const webTest = () => ({ id: 'web-test', secret: stack.secrets.webTestClientSecret });

async function signIn(load: Load) {
  const code = await measured(
    load,
    'sign-in',
    () =>
      authorizationCode(new HttpBrowser(), {
        authorizeAt: stack.issuer,
        clientId: 'web-test',
        redirectUri: WEB_TEST_REDIRECT_URI,
        // email: the orders API finds the caller's orders by the token's email claim.
        scope: 'openid email offline_access orders.read',
        user: stack.user,
      }),
    (answer) => typeof answer.code === 'string',
  );
  if (!code) return undefined;
  const tokens = await measured(
    load,
    'code redemption',
    () => redeemCode(stack.issuer, webTest(), code, WEB_TEST_REDIRECT_URI),
    (answer) => answer.status === 200,
  );
  return tokens?.status === 200
    ? (tokens.json as { access_token: string; refresh_token: string })
    : undefined;
}

/** One user's traffic: a refresh chain kept across the whole upgrade, plus a new grant each round. */
async function worker(load: Load, index: number, running: () => boolean, bff: HttpBrowser) {
  const first = await signIn(load);
  if (!first) return;
  let { refresh_token: chain, access_token: accessToken } = first;
  while (running()) {
    await signIn(load);
    const rotated = await measured(
      load,
      'refresh',
      () => refresh(stack.issuer, webTest(), chain),
      (a) => a.status === 200,
    );
    if (rotated?.status === 200)
      ({ refresh_token: chain, access_token: accessToken } = rotated.json as typeof first);
    await measured(
      load,
      'introspection',
      () =>
        postForm(
          `${stack.issuer}/introspect`,
          { token: accessToken },
          basicAuthorization('orders-api', stack.secrets.ordersApiSecret),
        ),
      (answer) => answer.json.active === true,
    );
    await measured(
      load,
      'order placed',
      () => placeOrder(index),
      (status) => status === 201,
    );
    await measured(
      load,
      'orders listed (JWT)',
      () => listOrders(accessToken),
      (status) => status === 200,
    );
    await measured(
      load,
      'BFF call (session)',
      () => bffOrders(bff),
      (status) => status === 200,
    );
  }
  load.chains[index] = chain;
}

const placeOrder = (index: number) =>
  fetch(`${stack.ordersBaseUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.secrets.apiKey },
    body: JSON.stringify({ email: stack.user.email, quantity: index + 1 }),
  }).then((response) => response.status);

const listOrders = (accessToken: string) =>
  fetch(`${stack.ordersBaseUrl}/orders`, { headers: { authorization: `Bearer ${accessToken}` } }).then(
    (response) => response.status,
  );

const bffOrders = (browser: HttpBrowser) =>
  fetch(`${stack.ordersBaseUrl}/bff/orders`, {
    headers: { 'x-csrf': '1', cookie: `__Host-orders-session=${browser.cookie('__Host-orders-session')}` },
  }).then((response) => response.status);

/** Starts the new instance, checks it, puts it behind the gateway in the old one's place, stops the old one. */
async function replace(
  gateway: RoundRobinProxy,
  backends: number[],
  slot: number,
  old: ManagedProcess,
  start: () => Promise<AddedInstance>,
  check: (added: AddedInstance) => Promise<void>,
) {
  const added = await start();
  await check(added);
  backends[slot] = added.port;
  gateway.setBackends(backends);
  await old.stop();
  expect(await old.exited).toBe(0);
}

/** The instances' error lines (pino level 50 and above), each under its instance's header. */
const serverErrors = (logs: string) =>
  logs
    .split('\n')
    .filter((line) => line.startsWith('----- ') || /"level":(5|6)0\b/.test(line))
    .join('\n');

const jwks = (url: string) => fetch(`${url}/jwks`).then((response) => response.json());

function migrateCheck(): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/migrate.ts', 'check'], {
    cwd: `${repositoryRoot}/apps/auth-server`,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: authDatabase.url },
    encoding: 'utf8',
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe.skipIf(missing !== undefined && process.env.CI !== 'true')(
  `rolling upgrade from ${release.tag}`,
  () => {
    it(
      'replaces every instance one at a time under load: no failed request, no lost session, refresh chains intact, keys shared',
      async () => {
        // Before the upgrade: migrate check says what the new release applies, and that it is safe.
        const check = migrateCheck();
        expect(check.output).toMatch(/\bsafe: only expanding migrations/);
        expect(check.status).toBe(0);

        const load: Load = { counts: {}, failures: [], chains: [] };
        const bffBrowsers = Array.from({ length: WORKERS }, () => new HttpBrowser());
        for (const browser of bffBrowsers) {
          const { callback } = await ordersSignIn(browser, {
            startAt: stack.ordersBaseUrl,
            authAt: stack.issuer,
            finishAt: stack.ordersBaseUrl,
            user: stack.user,
          });
          expect(callback.status).toBe(303);
        }
        let running = true;
        const started = Date.now();
        const workers = bffBrowsers.map((browser, index) => worker(load, index, () => running, browser));
        await new Promise((resolve) => setTimeout(resolve, LOAD_BEFORE_MS));

        const authBackends = stack.authUrls.map((url) => Number(new URL(url).port));
        for (const slot of [0, 1]) {
          await replace(
            stack.gateway,
            authBackends,
            slot,
            stack.auth[slot]!,
            () => stack.addAuth(`auth-server-new-${slot + 1}`, repositoryRoot),
            async (added) => {
              // One set of signing keys in the shared database: old and new publish the same JWKS.
              expect(await jwks(added.url)).toEqual(await jwks(stack.authUrls[slot]!));
            },
          );
        }
        const ordersBackends = stack.ordersUrls.map((url) => Number(new URL(url).port));
        for (const slot of [0, 1]) {
          await replace(
            stack.ordersGateway!,
            ordersBackends,
            slot,
            stack.orders[slot]!,
            () => stack.addOrders(`orders-new-${slot + 1}`, repositoryRoot),
            async () => {},
          );
        }
        await new Promise((resolve) => setTimeout(resolve, LOAD_AFTER_MS));
        running = false;
        await Promise.all(workers);
        const seconds = (Date.now() - started) / 1000;
        const total = Object.values(load.counts).reduce((sum, count) => sum + count, 0);
        // The HTTP gateways count requests per backend: old and new instances each served some.
        const served = [stack.gateway.connections(), stack.ordersGateway!.connections()];
        const requests = served.flatMap(Object.values).reduce((sum, count) => sum + count, 0);
        console.info(
          `rolling upgrade: ${total} operations (${requests} HTTP requests through the gateways) in ${seconds.toFixed(1)} s, ${load.failures.length} failed`,
          load.counts,
        );
        for (const counts of served) {
          expect(Object.keys(counts)).toHaveLength(4);
          expect(Object.values(counts).every((count) => count > 0)).toBe(true);
        }

        // A failure names the instance and the error the server logged for it.
        if (load.failures.length > 0) console.error(serverErrors(stack.logs()));
        expect(load.failures).toEqual([]);
        expect(load.counts.refresh).toBeGreaterThan(WORKERS * 3);
        // Every refresh chain rotated through the upgrade is still alive: one more rotation succeeds.
        for (const chain of load.chains)
          expect((await refresh(stack.issuer, webTest(), chain)).status).toBe(200);
        // The new release applied its migrations; nothing is left to apply.
        expect(migrateCheck().output).toMatch(/nothing to apply/);
      },
      UPGRADE_TIMEOUT_MS,
    );
  },
);
