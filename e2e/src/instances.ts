import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpGateway } from './http-gateway.js';
import { createPrivatePostgres, type PrivatePostgres, withClient } from './postgres.js';
import { findFreePort, type ManagedProcess, startNodeProcess, waitUntilReady } from './processes.js';
import { type RoundRobinProxy, startRoundRobinProxy } from './round-robin-proxy.js';

/**
 * Several instances of each service on shared databases, as production runs them behind load
 * balancers: every auth-server instance gets the same ISSUER, KEY_ENCRYPTION_KEY and seed, every
 * orders instance the same SESSION_SECRET, client and API key. ISSUER is a round-robin TCP proxy
 * over the auth-server instances (so the orders instances' back-channel calls spread over them);
 * a test can also address any instance directly by `authUrls[i]` / `ordersUrls[i]`.
 *
 * Processes run with NODE_ENV=production and LOG_LEVEL=info, so their logs are what an operator
 * would collect; `secretValues()` lists every secret the stack was configured with, for the log
 * checks.
 */

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** The `web-test` client's redirect URI: nothing listens there, tests read the Location header. */
export const WEB_TEST_REDIRECT_URI = 'http://127.0.0.1:9/callback';

export interface InstanceOptions {
  authDatabaseUrl: string;
  ordersDatabaseUrl: string;
  authCount: number;
  ordersCount: number;
  /** Lifetime of the orders API's JWT access tokens, seconds. */
  accessTokenTtl?: number;
  authEnv?: Record<string, string>;
  ordersEnv?: Record<string, string>;
  /** Where the first processes' `apps/` folder is: another release's checkout (default this tree). */
  releaseRoot?: string;
  /** Puts the orders instances behind a round-robin proxy of their own, which is then BASE_URL. */
  ordersGateway?: boolean;
  /**
   * `tcp` (default): a TCP balancer, keep-alive connections stay on their backend; `http`: an HTTP
   * gateway that sends every request to the next backend, as the deployed nginx does.
   */
  gatewayKind?: 'tcp' | 'http';
  /** The auth gateway's port, so ISSUER is another (stopped) stack's again; any free one by default. */
  issuerPort?: number;
  /** Another stack's secrets (a restore from its backup); fresh random ones by default. */
  secrets?: Instances['secrets'];
  /** Seed members added to a client, by client_id (e.g. `refresh_token_reuse_interval`). */
  clientSettings?: Record<string, Record<string, unknown>>;
}

/** One more process of a running stack, started with the stack's configuration. */
export interface AddedInstance {
  port: number;
  url: string;
  process: ManagedProcess;
}

export interface Instances {
  /** The ISSUER of every auth-server instance: the round-robin proxy. */
  issuer: string;
  authUrls: string[];
  ordersUrls: string[];
  /** BASE_URL of every orders instance (the redirect URI is `${ordersBaseUrl}/signin-oidc`). */
  ordersBaseUrl: string;
  gateway: RoundRobinProxy;
  /** With `ordersGateway`: the proxy in front of the orders instances. */
  ordersGateway: RoundRobinProxy | undefined;
  auth: ManagedProcess[];
  orders: ManagedProcess[];
  secrets: {
    password: string;
    ordersWebClientSecret: string;
    webTestClientSecret: string;
    workerClientSecret: string;
    ordersApiSecret: string;
    reportsApiSecret: string;
    apiKey: string;
    sessionSecret: string;
    keyEncryptionKey: string;
  };
  user: { sub: string; username: string; password: string; name: string; email: string };
  /** Every secret value configured, for "not in the logs" checks. */
  secretValues(): string[];
  /** Everything every process printed. */
  logs(): string;
  /**
   * Starts one more auth-server (or orders) process from `releaseRoot`'s tree with the stack's
   * configuration and waits until it is ready; the caller puts it behind the gateway.
   */
  addAuth(name: string, releaseRoot: string): Promise<AddedInstance>;
  addOrders(name: string, releaseRoot: string): Promise<AddedInstance>;
  stop(): Promise<void>;
}

export async function startInstances(options: InstanceOptions): Promise<Instances> {
  const random = (bytes = 24) => randomBytes(bytes).toString('base64url');
  const secrets = options.secrets ?? {
    password: `pw-${random(12)}`,
    ordersWebClientSecret: random(),
    webTestClientSecret: random(),
    workerClientSecret: random(),
    ordersApiSecret: random(),
    reportsApiSecret: random(),
    apiKey: random(),
    sessionSecret: random(32),
    keyEncryptionKey: random(32),
  };
  const user = {
    sub: 'u-alice',
    username: 'alice',
    password: secrets.password,
    name: 'Alice Example',
    email: 'alice@example.com',
  };
  const authPorts = await Promise.all(Array.from({ length: options.authCount }, () => findFreePort()));
  const ordersPorts = await Promise.all(Array.from({ length: options.ordersCount }, () => findFreePort()));
  const startGateway = options.gatewayKind === 'http' ? startHttpGateway : startRoundRobinProxy;
  const gateway = await startGateway(authPorts, options.issuerPort);
  const ordersGateway = options.ordersGateway ? await startGateway(ordersPorts) : undefined;
  const issuer = `http://127.0.0.1:${gateway.port}`;
  const authUrls = authPorts.map((port) => `http://127.0.0.1:${port}`);
  const ordersUrls = ordersPorts.map((port) => `http://127.0.0.1:${port}`);
  const ordersBaseUrl = ordersGateway ? `http://127.0.0.1:${ordersGateway.port}` : ordersUrls[0]!;
  const releaseRoot = options.releaseRoot ?? '.';

  const seed = {
    clients: [
      {
        client_id: 'orders-web',
        client_secret: secrets.ordersWebClientSecret,
        redirect_uris: [`${ordersBaseUrl}/signin-oidc`],
        post_logout_redirect_uris: [`${ordersBaseUrl}/signed-out`],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read orders.write',
        skip_consent: true,
      },
      {
        client_id: 'web-test',
        client_secret: secrets.webTestClientSecret,
        redirect_uris: [WEB_TEST_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read',
        skip_consent: true,
      },
      {
        client_id: 'cli',
        grant_types: [DEVICE_GRANT, 'refresh_token'],
        scope: 'openid profile offline_access orders.read',
      },
      {
        client_id: 'worker',
        client_secret: secrets.workerClientSecret,
        grant_types: ['client_credentials'],
        scope: 'reports.read orders.write',
      },
    ],
    resources: [
      {
        id: 'orders-api',
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: options.accessTokenTtl ?? 300,
        secret: secrets.ordersApiSecret,
        claims: ['email'],
      },
      {
        id: 'reports-api',
        scopes: ['reports.read'],
        access_token_format: 'opaque',
        secret: secrets.reportsApiSecret,
      },
    ],
    users: [user],
  };
  for (const client of seed.clients) Object.assign(client, options.clientSettings?.[client.client_id]);
  const directory = await mkdtemp(join(tmpdir(), 'e2e-instances-'));
  const seedFile = join(directory, 'seed.json');
  await writeFile(seedFile, JSON.stringify(seed), { mode: 0o600 });

  const auth: ManagedProcess[] = [];
  const orders: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.all([...orders, ...auth].map((handle) => handle.stop()));
    await gateway.close();
    await ordersGateway?.close();
    await rm(directory, { recursive: true, force: true });
  };
  const logs = () =>
    [...auth, ...orders].map((handle) => `----- ${handle.name}\n${handle.output()}`).join('\n');

  const startAuth = (name: string, port: number, root: string) =>
    startNodeProcess(name, join(root, 'apps/auth-server'), 'src/server.ts', {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      ISSUER: issuer,
      DATABASE_URL: options.authDatabaseUrl,
      SEED_FILE: seedFile,
      KEY_ENCRYPTION_KEY: secrets.keyEncryptionKey,
      LOG_LEVEL: 'info',
      SHUTDOWN_PAUSE_MS: '0',
      DEVICE_CODE_POLL_INTERVAL: '1',
      ...options.authEnv,
    });
  const startOrders = (name: string, port: number, root: string) =>
    startNodeProcess(name, join(root, 'apps/orders'), 'src/server.ts', {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: options.ordersDatabaseUrl,
      API_KEY: secrets.apiKey,
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: secrets.ordersWebClientSecret,
      SESSION_SECRET: secrets.sessionSecret,
      RESOURCE_ID: 'orders-api',
      RESOURCE_SECRET: secrets.ordersApiSecret,
      BASE_URL: ordersBaseUrl,
      LOG_LEVEL: 'info',
      SHUTDOWN_PAUSE_MS: '0',
      ...options.ordersEnv,
    });
  const authReady = (handle: ManagedProcess, url: string) => waitUntilReady(handle, `${url}/health/ready`);
  const ordersReady = (handle: ManagedProcess, url: string) =>
    waitUntilReady(handle, `${url}/health/ready`, (body) => body.includes('"oidc":"ready"'));
  const add =
    (list: ManagedProcess[], start: typeof startAuth, ready: typeof authReady) =>
    async (name: string, root: string): Promise<AddedInstance> => {
      const port = await findFreePort();
      const url = `http://127.0.0.1:${port}`;
      const handle = start(name, port, root);
      list.push(handle);
      await ready(handle, url);
      return { port, url, process: handle };
    };

  try {
    authPorts.forEach((port, index) => {
      auth.push(startAuth(`auth-server-${index + 1}`, port, releaseRoot));
    });
    await Promise.all(auth.map((handle, index) => authReady(handle, authUrls[index]!)));
    ordersPorts.forEach((port, index) => {
      orders.push(startOrders(`orders-${index + 1}`, port, releaseRoot));
    });
    await Promise.all(orders.map((handle, index) => ordersReady(handle, ordersUrls[index]!)));
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    issuer,
    authUrls,
    ordersUrls,
    ordersBaseUrl,
    gateway,
    ordersGateway,
    auth,
    orders,
    secrets,
    user,
    secretValues: () => Object.values(secrets),
    logs,
    addAuth: add(auth, startAuth, authReady),
    addOrders: add(orders, startOrders, ordersReady),
    stop,
  };
}

export function basicAuthorization(id: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

/** POST a form to `url` (the token, device authorization, revocation endpoints). */
export async function postForm(
  url: string,
  fields: Record<string, string>,
  authorization?: string,
): Promise<{ status: number; headers: Headers; json: Record<string, unknown>; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization ? { authorization } : {}),
    },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (an empty 200 from /revoke, for example)
  }
  return { status: response.status, headers: response.headers, json, text };
}

/**
 * One auth server and one orders process on a PostgreSQL server of the test's own (databases
 * `auth` and `orders`), for suites that stop that server under the running apps.
 */
export async function startOnPrivatePostgres(
  ordersEnv: Record<string, string>,
): Promise<{ postgres: PrivatePostgres; stack: Instances }> {
  const postgres = await createPrivatePostgres();
  await postgres.start();
  await withClient(postgres.url(), async (client) => {
    await client.query('create database auth');
    await client.query('create database orders');
  });
  const stack = await startInstances({
    authDatabaseUrl: postgres.url('auth'),
    ordersDatabaseUrl: postgres.url('orders'),
    authCount: 1,
    ordersCount: 1,
    ordersEnv,
  });
  return { postgres, stack };
}
