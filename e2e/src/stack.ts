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
import {
  findFreePort,
  type RunningService,
  startAuthServer,
  startNodeProcess,
  startOrdersService,
  waitUntilReady,
} from '@oidc-orders/service-kit/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';

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
  /** More seed users beside the stack's user, and the seed's `admins` (the console suite). */
  seedExtras?: { users?: ReadonlyArray<object>; admins?: readonly string[] };
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

function withExtras(seed: ReturnType<typeof buildSeed>, extras: StackOptions['seedExtras']) {
  if (extras === undefined) return seed;
  return {
    ...seed,
    users: [...seed.users, ...(extras.users ?? [])],
    ...(extras.admins ? { admins: extras.admins } : {}),
  };
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const random = (bytes = 24) => randomBytes(bytes).toString('base64url');
  const [authPort, ordersPort, spaPort, dashboardPort] = await Promise.all([
    findFreePort(),
    findFreePort(),
    findFreePort(),
    findFreePort(),
  ]);
  const urls = {
    orders: `http://localhost:${ordersPort}`,
    spa: `http://localhost:${spaPort}`,
    dashboard: `http://localhost:${dashboardPort}`,
  };
  const secrets = { ordersWebClientSecret: random(), resourceSecret: random() };
  const user: StackUser = {
    sub: 'u-alice',
    username: 'alice',
    password: random(12),
    name: 'Alice Example',
    email: 'alice@example.com',
  };
  const services: { name: string; output(): string; stop(): Promise<void> }[] = [];
  const stop = () => Promise.all(services.map((service) => service.stop())).then(() => {});
  const logs = () => services.map((service) => `----- ${service.name}\n${service.output()}`).join('\n');

  try {
    // The SPAs only need the issuer's address, so they start while the auth server does.
    const spa = startSpas(`http://localhost:${authPort}`, urls, spaPort, dashboardPort);
    services.push(...spa.processes);
    const auth = await startAuthServer({
      seed: withExtras(buildSeed(urls, secrets, user, options.accessTokenTtl ?? 300), options.seedExtras),
      hostname: 'localhost',
      port: authPort,
      // The CLI polls every second instead of five: the device test waits less, the protocol is the same.
      env: { DEVICE_CODE_POLL_INTERVAL: '1', ...options.authEnv },
    });
    services.push({ name: 'auth-server', ...bind(auth) });
    const orders = await startOrdersService({
      issuer: auth.issuer,
      resourceSecret: secrets.resourceSecret,
      hostname: 'localhost',
      port: ordersPort,
      // Ready with the provider discovered, not merely listening.
      waitForProvider: true,
      env: {
        NODE_ENV: 'development',
        OIDC_CLIENT_SECRET: secrets.ordersWebClientSecret,
        ALLOWED_CORS_ORIGINS: `${urls.spa} ${urls.dashboard}`,
      },
    });
    services.push({ name: 'orders', ...bind(orders) });
    await spa.ready;
    return {
      issuer: auth.issuer,
      ordersUrl: urls.orders,
      spaUrl: urls.spa,
      dashboardUrl: urls.dashboard,
      user,
      ordersApiKey: orders.apiKey,
      logs,
      stop,
    };
  } catch (error) {
    const output = logs();
    await stop();
    throw new Error(`the stack did not start: ${(error as Error).message}\n${output}`);
  }
}

function bind(service: RunningService): { output(): string; stop(): Promise<void> } {
  return { output: () => service.output(), stop: () => service.stop() };
}

/** The public SPA twice: client `orders-spa` and client `orders-dashboard` (asks for consent). */
function startSpas(issuer: string, urls: { orders: string }, spaPort: number, dashboardPort: number) {
  const spa = (name: string, port: number, clientId: string) =>
    startNodeProcess(name, 'apps/spa', 'src/server.ts', {
      HOST: '127.0.0.1',
      PORT: String(port),
      SPA_ISSUER: issuer,
      SPA_CLIENT_ID: clientId,
      SPA_API_URL: `${urls.orders}/orders`,
    });
  const processes = [
    spa('spa', spaPort, 'orders-spa'),
    spa('spa (dashboard)', dashboardPort, 'orders-dashboard'),
  ];
  const ready = Promise.all(
    processes.map((handle, index) =>
      waitUntilReady(handle, `http://localhost:${index === 0 ? spaPort : dashboardPort}/health`),
    ),
  );
  return { processes, ready };
}

export interface UseStackOptions {
  /** Read in beforeAll, so it may use what an earlier beforeAll started (an SMTP server's URL). */
  options?: () => StackOptions;
  /** Runs after every test, failed or not (closing the test's browser). */
  afterEachTest?: () => Promise<void>;
}

/**
 * The stack for one suite: started in beforeAll, stopped in afterAll, its logs printed after a
 * failed test. Read its members inside hooks and tests.
 */
export function useStack(use: UseStackOptions = {}): Stack {
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await startStack(use.options?.());
  });
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') console.error(stack?.logs());
    await use.afterEachTest?.();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  const current = (): Stack => {
    if (!stack) throw new Error('useStack: read inside a hook or test, after beforeAll');
    return stack;
  };
  return new Proxy({} as Stack, { get: (_target, property) => Reflect.get(current(), property) });
}
