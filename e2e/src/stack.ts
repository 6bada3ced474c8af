/**
 * The whole system on one machine, as `pnpm dev` runs it: the authorization server, the orders
 * service (BFF, orders app at /app, bearer API) and the public-client SPA, each a real process
 * (`node --import tsx src/server.ts`) on a free port, seeded with random secrets, on fresh
 * databases (pglite://memory, or per-run PostgreSQL databases with TEST_DATABASE_URL).
 *
 * Every public URL uses `localhost`, not 127.0.0.1: Chromium treats http://localhost as a secure
 * context, so it keeps `Secure` and `__Host-` cookies (the orders session) and offers WebCrypto
 * (PKCE in the SPA). The processes listen on 127.0.0.1, which is what localhost resolves to.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createRunDatabase,
  findFreePort,
  type ManagedProcess,
  type RunDatabase,
  startNodeProcess,
  waitUntilReady,
} from './processes.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface StackUser {
  sub: string;
  username: string;
  password: string;
  name: string;
  email: string;
}

export interface StackOptions {
  /** Lifetime of the orders API's access tokens, seconds (short, so a refresh can be forced). */
  accessTokenTtl?: number;
  /** More environment for the authorization server (the mail suite's SMTP_URL). */
  authEnv?: Record<string, string>;
}

export interface Stack {
  /** `http://localhost:<port>`: ISSUER of the authorization server. */
  issuer: string;
  /** `http://localhost:<port>`: BASE_URL of the orders service (the orders app is `/app`). */
  ordersUrl: string;
  /** The public SPA with client `orders-spa` (skip_consent). */
  spaUrl: string;
  /** The same SPA with client `orders-dashboard`, which asks for consent. */
  dashboardUrl: string;
  user: StackUser;
  /** The orders service's x-api-key (back-office routes, to create orders for a test). */
  ordersApiKey: string;
  /** Everything every process printed, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

/** The seed of CONTRACT.md's shape, with every secret random. */
function buildSeed(
  urls: { orders: string; spa: string; dashboard: string },
  secrets: Record<string, string>,
  user: StackUser,
  accessTokenTtl: number,
) {
  const publicSpa = (clientId: string, clientName: string, origin: string, skipConsent: boolean) => ({
    client_id: clientId,
    client_name: clientName,
    redirect_uris: [`${origin}/callback`],
    post_logout_redirect_uris: [`${origin}/`],
    grant_types: ['authorization_code', 'refresh_token'],
    scope: 'openid profile email offline_access orders.read',
    allowed_cors_origins: [origin],
    skip_consent: skipConsent,
  });
  return {
    clients: [
      {
        client_id: 'orders-web',
        client_name: 'Orders',
        client_secret: secrets.ordersWebClientSecret,
        redirect_uris: [`${urls.orders}/signin-oidc`],
        post_logout_redirect_uris: [`${urls.orders}/signed-out`],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read orders.write',
        skip_consent: true,
        backchannel_logout_uri: `${urls.orders}/backchannel-logout`,
        allowed_cors_origins: [],
        // As the shipped seeds register it (scripts/dev.mjs); apps/orders/test/signin.e2e.test.ts
        // covers the RS256 default with the same openid-client code.
        id_token_signed_response_alg: 'ES256',
      },
      publicSpa('orders-spa', 'Orders SPA', urls.spa, true),
      publicSpa('orders-dashboard', 'Orders Dashboard', urls.dashboard, false),
      {
        client_id: 'orders-cli',
        client_name: 'Orders CLI',
        grant_types: [DEVICE_GRANT, 'refresh_token'],
        scope: 'openid profile email offline_access orders.read',
      },
    ],
    resources: [
      {
        id: 'orders-api',
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: accessTokenTtl,
        secret: secrets.resourceSecret,
        claims: ['email'],
      },
    ],
    users: [user],
  };
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const random = (bytes = 24) => randomBytes(bytes).toString('base64url');
  const runId = randomBytes(5).toString('hex');
  const [authPort, ordersPort, spaPort, dashboardPort] = await Promise.all([
    findFreePort(),
    findFreePort(),
    findFreePort(),
    findFreePort(),
  ]);
  const issuer = `http://localhost:${authPort}`;
  const ordersUrl = `http://localhost:${ordersPort}`;
  const spaUrl = `http://localhost:${spaPort}`;
  const dashboardUrl = `http://localhost:${dashboardPort}`;
  const secrets = {
    ordersWebClientSecret: random(),
    resourceSecret: random(),
    ordersApiKey: random(),
    sessionSecret: random(32),
  };
  const user: StackUser = {
    sub: 'u-alice',
    username: 'alice',
    password: random(12),
    name: 'Alice Example',
    email: 'alice@example.com',
  };

  const directory = await mkdtemp(join(tmpdir(), 'e2e-stack-'));
  const seedFile = join(directory, 'seed.json');
  const seed = buildSeed(
    { orders: ordersUrl, spa: spaUrl, dashboard: dashboardUrl },
    secrets,
    user,
    options.accessTokenTtl ?? 300,
  );
  await writeFile(seedFile, JSON.stringify(seed), { mode: 0o600 });

  const processes: ManagedProcess[] = [];
  const databases: RunDatabase[] = [];
  const stop = async () => {
    await Promise.all(processes.map((handle) => handle.stop()));
    await Promise.all(databases.map((database) => database.drop()));
    await rm(directory, { recursive: true, force: true });
  };
  const logs = () => processes.map((handle) => `----- ${handle.name}\n${handle.output()}`).join('\n');
  const common = { NODE_ENV: 'development', SHUTDOWN_PAUSE_MS: '0', LOG_LEVEL: 'warn', HOST: '127.0.0.1' };

  try {
    const authDatabase = await createRunDatabase('e2e_auth', runId);
    databases.push(authDatabase);
    const ordersDatabase = await createRunDatabase('e2e_orders', runId);
    databases.push(ordersDatabase);

    const auth = startNodeProcess('auth-server', 'apps/auth-server', 'src/server.ts', {
      ...common,
      PORT: String(authPort),
      ISSUER: issuer,
      DATABASE_URL: authDatabase.url,
      SEED_FILE: seedFile,
      KEY_ENCRYPTION_KEY: random(32),
      // The CLI polls every second instead of five: the device test waits less, the protocol is the same.
      DEVICE_CODE_POLL_INTERVAL: '1',
      ...options.authEnv,
    });
    processes.push(auth);
    const spa = (name: string, port: number, clientId: string) =>
      startNodeProcess(name, 'apps/spa', 'src/server.ts', {
        HOST: '127.0.0.1',
        PORT: String(port),
        SPA_ISSUER: issuer,
        SPA_CLIENT_ID: clientId,
        SPA_API_URL: `${ordersUrl}/orders`,
      });
    const spaProcess = spa('spa', spaPort, 'orders-spa');
    const dashboardProcess = spa('spa (dashboard)', dashboardPort, 'orders-dashboard');
    processes.push(spaProcess, dashboardProcess);
    await waitUntilReady(auth, `${issuer}/health/ready`);

    const orders = startNodeProcess('orders', 'apps/orders', 'src/server.ts', {
      ...common,
      PORT: String(ordersPort),
      BASE_URL: ordersUrl,
      DATABASE_URL: ordersDatabase.url,
      API_KEY: secrets.ordersApiKey,
      SESSION_SECRET: secrets.sessionSecret,
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: secrets.ordersWebClientSecret,
      RESOURCE_ID: 'orders-api',
      RESOURCE_SECRET: secrets.resourceSecret,
      ALLOWED_CORS_ORIGINS: `${spaUrl} ${dashboardUrl}`,
    });
    processes.push(orders);
    await Promise.all([
      // Ready with the provider discovered, not merely listening.
      waitUntilReady(orders, `${ordersUrl}/health/ready`, (body) => body.includes('"oidc":"ready"')),
      waitUntilReady(spaProcess, `${spaUrl}/health`),
      waitUntilReady(dashboardProcess, `${dashboardUrl}/health`),
    ]);
  } catch (error) {
    const output = logs();
    await stop();
    throw new Error(`the stack did not start: ${(error as Error).message}\n${output}`);
  }

  return { issuer, ordersUrl, spaUrl, dashboardUrl, user, ordersApiKey: secrets.ordersApiKey, logs, stop };
}
