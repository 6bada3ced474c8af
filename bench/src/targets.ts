/**
 * The systems under test, each started as child processes with the environment CONTRACT.md
 * describes, and the workload list each of them runs.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createBarePgSchema, type DatabaseAdmin } from './databases.js';
import type { CodeFlowSettings } from './oauth-flow.js';
import type { BarePgPeerConfig, ProviderPeerConfig } from './peers/peer-config.js';
import { freePort, type ServerProcess, startServer } from './processes.js';
import { BENCH_ACCESS_TOKEN_TTL, type BenchIdentities, newIdentities, writeSeedFile } from './seed.js';
import { type RedisServerProcess, startRedisServer } from './store/redis-server.js';
import { clientCredentialsWorkload } from './workloads/client-credentials.js';
import { codeWorkload } from './workloads/code.js';
import { httpCeilingWorkload } from './workloads/http-ceiling.js';
import { introspectWorkload } from './workloads/introspect.js';
import { discoveryWorkload, jwksWorkload } from './workloads/metadata.js';
import { type OrdersTarget, ordersCreateWorkload, ordersListWorkload } from './workloads/orders.js';
import { refreshWorkload } from './workloads/refresh.js';
import { signInWorkload } from './workloads/signin.js';
import { tokenFloorWorkload } from './workloads/token-floor.js';
import { type AuthTarget, type Discovery, loadDiscovery, type Workload } from './workloads/types.js';
import { issueUserTokens } from './workloads/user-flows.js';

export const BENCH_DIR = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
export const REPO_DIR = resolve(BENCH_DIR, '..');

export interface System {
  servers: ServerProcess[];
  /** PostgreSQL databases its servers use: the CPU of their backends is reported per request. */
  databases?: string[];
  /** Store processes sampled like the servers (`<group>:<pid>` in `cpuMsPerOk`), e.g. the peer's Redis. */
  stores?: { group: string; pid: number }[];
  workloads: Workload[];
  /** Start failures: the workloads of a server that did not start are reported failed. */
  failures: { server: string; detail: string; workloads: Workload['name'][] }[];
  /** Removes what the system left on disk (seed with secrets, PGlite directories). */
  cleanup?: () => Promise<void>;
  /** Our servers' endpoints and credentials, for the soak run's mix (src/soak/mix.ts). */
  ours?: { auth?: AuthTarget; orders?: OrdersTarget };
}

export interface StartContext {
  logDir: string;
  /** With `--profile`: CPU profiles of our servers go to `<profileDir>/<server>/`. */
  profileDir?: string;
  /** With `--server-node-flags`: extra node flags for our servers (e.g. `--max-old-space-size=96`). */
  serverNodeFlags?: string[];
  /** With `--id-token-alg`: the web client's ID Token algorithm in the seed. */
  idTokenAlg?: 'RS256' | 'ES256';
  /** Lifetime of the seeded resources' access tokens, seconds (see `SeedOptions`). */
  accessTokenTtl?: number;
  /**
   * How our servers start: `bundle` (default) as their `pnpm start` does (the esbuild bundle
   * `dist/server.js` on plain node, with the node flags of the start script); `tsx`:
   * `node --import tsx src/server.ts`, as the tests and `pnpm dev` run them.
   */
  start?: 'bundle' | 'tsx';
  admin: DatabaseAdmin | undefined;
  stamp: string;
  /** With `--pin`: the CPU every server is confined to (the load generator runs on another). */
  serverCpu?: number;
}

/** The `ServerSpec.cpu` of every server of the run: set only with `--pin`. */
function pinning(context: StartContext): { cpu?: number } {
  return context.serverCpu === undefined ? {} : { cpu: context.serverCpu };
}

function profileFlags(context: StartContext, server: string): string[] {
  const profile = context.profileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${join(context.profileDir, server)}`]
    : [];
  return [...(context.serverNodeFlags ?? []), ...profile];
}

interface OurEntry {
  entry: string;
  /** Node flags of the app's production start, before the harness's own. */
  nodeFlags: string[];
}

const built = new Map<string, Promise<OurEntry>>();

/**
 * What `pnpm start` of an app runs: it bundles (scripts/bundle-server.mjs) and then execs
 * `node <flags> dist/server.js`. The harness does the same (once per app and harness run) and
 * starts node itself, so the pid it samples is the server's; the flags are read from the start
 * script, so they cannot drift apart.
 */
function ourEntry(app: 'auth-server' | 'orders', start: 'bundle' | 'tsx' | undefined): Promise<OurEntry> {
  if (start === 'tsx') return Promise.resolve({ entry: 'src/server.ts', nodeFlags: [] });
  let entry = built.get(app);
  if (!entry) {
    entry = (async () => {
      const appDir = join(REPO_DIR, 'apps', app);
      const manifest = JSON.parse(await readFile(join(appDir, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>;
      };
      const match = /\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+dist\/server\.js\b/.exec(
        manifest.scripts?.start ?? '',
      );
      if (!match) throw new Error(`apps/${app}: the start script does not run node … dist/server.js`);
      await promisify(execFile)(process.execPath, [join(REPO_DIR, 'scripts', 'bundle-server.mjs'), appDir]);
      return { entry: 'dist/server.js', nodeFlags: (match[1] ?? '').split(/\s+/).filter(Boolean) };
    })();
    built.set(app, entry);
  }
  return entry;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

export async function startBareFastify(context: StartContext): Promise<System> {
  const port = await freePort();
  const server = await startServer({
    name: 'bare-fastify',
    cwd: BENCH_DIR,
    entry: 'src/peers/bare-fastify.ts',
    port,
    env: { PORT: String(port), NODE_ENV: 'production' },
    logDir: context.logDir,
    ...pinning(context),
  });
  return {
    servers: [server],
    workloads: [httpCeilingWorkload(server.baseUrl), tokenFloorWorkload(server.baseUrl)],
    failures: [],
  };
}

export async function startBarePg(context: StartContext): Promise<System> {
  if (!context.admin) throw new Error('bare-pg needs PostgreSQL');
  const databaseUrl = await context.admin.create(`bench_${context.stamp}_barepg`);
  await createBarePgSchema(databaseUrl);
  const port = await freePort();
  const config: BarePgPeerConfig = { port, databaseUrl, poolSize: 10 };
  const databases = [`bench_${context.stamp}_barepg`];
  const server = await startServer({
    name: 'bare-pg',
    cwd: BENCH_DIR,
    entry: 'src/peers/bare-pg.ts',
    port,
    env: { BENCH_PEER_CONFIG: JSON.stringify(config), NODE_ENV: 'production' },
    logDir: context.logDir,
    ...pinning(context),
  });
  const listEmail = 'bench-list@example.com';
  const target: OrdersTarget = {
    baseUrl: server.baseUrl,
    createHeaders: {},
    listEmail,
    listUrl: `${server.baseUrl}/orders?email=${encodeURIComponent(listEmail)}`,
    listHeaders: async () => ({}),
  };
  return {
    servers: [server],
    databases,
    workloads: [ordersCreateWorkload(target), ordersListWorkload(target)],
    failures: [],
  };
}

/** The oidc-provider peer's server name in logs and `cpuMsPerOk`: `oidc-provider` or `oidc-provider-redis`. */
export function providerServerName(store: 'memory' | 'redis'): string {
  return store === 'memory' ? 'oidc-provider' : 'oidc-provider-redis';
}

function providerConfig(
  port: number,
  ids: BenchIdentities,
  redis: RedisServerProcess | undefined,
): ProviderPeerConfig {
  return {
    issuer: `http://127.0.0.1:${port}`,
    port,
    ccClient: ids.ccClient,
    introspector: { id: ids.opaqueResource.id, secret: ids.opaqueResource.secret },
    // Resource indicators are absolute URIs in oidc-provider (RFC 8707 §2).
    jwtResource: { id: 'urn:bench:orders-api', scope: ids.jwtResource.scope },
    opaqueResource: { id: 'urn:bench:orders-opaque', scope: ids.opaqueResource.scope },
    accessTokenTtl: BENCH_ACCESS_TOKEN_TTL,
    // Never contacted: the harness stops at the redirect and reads the code from it.
    webClient: { ...ids.webClient, redirectUri: `http://127.0.0.1:${port}/bench-callback` },
    user: { username: ids.user.username, password: ids.user.password },
    store: redis ? { kind: 'redis', url: redis.url } : { kind: 'memory' },
  };
}

function providerTarget(config: ProviderPeerConfig, document: Discovery, url: string): AuthTarget {
  return {
    issuer: config.issuer,
    discoveryUrl: url,
    tokenEndpoint: document.token_endpoint,
    introspectionEndpoint: document.introspection_endpoint,
    jwksUri: document.jwks_uri,
    ccClient: config.ccClient,
    introspector: config.introspector,
    jwtResource: config.jwtResource,
    opaqueResource: config.opaqueResource,
    ...(document.userinfo_endpoint ? { userinfoEndpoint: document.userinfo_endpoint } : {}),
    codeFlow: {
      authorizationEndpoint: document.authorization_endpoint,
      tokenEndpoint: document.token_endpoint,
      client: config.webClient,
      redirectUri: config.webClient.redirectUri,
      scope: `openid email ${config.jwtResource.scope}`,
      user: config.user,
    },
  };
}

/**
 * The oidc-provider peer on the library's in-memory adapter or on Redis (a redis-server of its own,
 * whose CPU is counted with the peer's). The in-memory adapter is an LRU of 1,000 entries, so the
 * `code` workload spends its codes in pools that fit (`AuthTarget.codePoolLimit`).
 */
export async function startOidcProvider(context: StartContext, store: 'memory' | 'redis'): Promise<System> {
  const redis = store === 'redis' ? await startRedisServer({ logDir: context.logDir }) : undefined;
  try {
    const port = await freePort();
    const config = providerConfig(port, newIdentities(), redis);
    const server = await startServer({
      name: providerServerName(store),
      cwd: BENCH_DIR,
      entry: 'src/peers/oidc-provider.ts',
      port,
      env: { BENCH_PEER_CONFIG: JSON.stringify(config), NODE_ENV: 'production' },
      logDir: context.logDir,
      ...pinning(context),
    });
    const { url, document } = await loadDiscovery(config.issuer);
    const target = providerTarget(config, document, url);
    if (!redis) target.codePoolLimit = MEMORY_ADAPTER_CODE_POOL;
    return {
      servers: [server],
      ...(redis ? { stores: [{ group: 'redis', pid: redis.pid }] } : {}),
      workloads: authWorkloads(target),
      failures: [],
      ...(redis ? { cleanup: () => redis.stop() } : {}),
    };
  } catch (error) {
    await redis?.stop();
    throw error;
  }
}

/**
 * Codes the in-memory adapter's 1,000 entries hold without evicting one before its turn: every
 * exchange stores a refresh token beside its code, and sessions and grants need room too.
 */
const MEMORY_ADAPTER_CODE_POOL = 400;

function authWorkloads(target: AuthTarget): Workload[] {
  const list = [
    clientCredentialsWorkload(target, 'jwt'),
    clientCredentialsWorkload(target, 'opaque'),
    introspectWorkload(target),
  ];
  if (target.codeFlow)
    list.push(
      refreshWorkload(target),
      codeWorkload(target),
      signInWorkload(target, 'signin'),
      signInWorkload(target, 'signin-cheap-hash'),
    );
  list.push(discoveryWorkload(target), jwksWorkload(target));
  return list;
}

const AUTH_WORKLOADS = [
  'cc-jwt',
  'cc-opaque',
  'introspect',
  'refresh',
  'code',
  'signin',
  'signin-cheap-hash',
  'discovery',
  'jwks',
] as const;
const ORDERS_WORKLOADS = ['orders-create', 'orders-list'] as const;

/**
 * Our two services on one database kind. The auth server gets a fresh database (or PGlite
 * directory) and a seed with random secrets; the orders service its own database, pointed at it.
 */
export async function startOurs(
  context: StartContext,
  db: 'postgres' | 'pglite',
  needOrders: boolean,
): Promise<System> {
  const ids = newIdentities();
  const scratch = await mkdtemp(join(tmpdir(), `bench-${db}-`));
  const authPort = await freePort();
  const ordersPort = await freePort();
  const issuer = `http://127.0.0.1:${authPort}`;
  const ordersBase = `http://127.0.0.1:${ordersPort}`;
  const redirectUri = `${ordersBase}/signin-oidc`;
  const seedFile = await writeSeedFile(scratch, ids, redirectUri, {
    ...(context.idTokenAlg ? { idTokenAlg: context.idTokenAlg } : {}),
    ...(context.accessTokenTtl ? { accessTokenTtl: context.accessTokenTtl } : {}),
  });

  const databaseUrl = async (app: string) => {
    if (db === 'pglite') return `pglite://${join(scratch, app)}`;
    if (!context.admin) throw new Error('PostgreSQL is not reachable');
    system.databases?.push(`bench_${context.stamp}_${app}`);
    return context.admin.create(`bench_${context.stamp}_${app}`);
  };

  const system: System = {
    servers: [],
    databases: [],
    workloads: [],
    failures: [],
    cleanup: () => rm(scratch, { recursive: true, force: true }),
    ours: {},
  };
  let auth: ServerProcess | undefined;
  try {
    const { entry, nodeFlags } = await ourEntry('auth-server', context.start);
    auth = await startServer({
      name: `auth-server-${db}`,
      nodeFlags: [...nodeFlags, ...profileFlags(context, `auth-server-${db}`)],
      cwd: join(REPO_DIR, 'apps/auth-server'),
      entry,
      port: authPort,
      env: {
        PORT: String(authPort),
        HOST: '127.0.0.1',
        ISSUER: issuer,
        DATABASE_URL: await databaseUrl('auth'),
        SEED_FILE: seedFile,
        KEY_ENCRYPTION_KEY: ids.keyEncryptionKey,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        SHUTDOWN_PAUSE_MS: '0',
        // The harness signs one user in from many parallel "browsers" on one address; the login
        // limits count attempts before the password check, so they would answer 429 (0 = off).
        LOGIN_MAX_FAILURES_PER_USERNAME: '0',
        LOGIN_MAX_FAILURES_PER_IP: '0',
      },
      logDir: context.logDir,
      ...pinning(context),
    });
    system.servers.push(auth);
  } catch (error) {
    system.failures.push({
      server: `auth-server-${db}`,
      detail: errorText(error),
      workloads: [...AUTH_WORKLOADS],
    });
  }

  let authTarget: AuthTarget | undefined;
  if (auth) {
    try {
      authTarget = await ourAuthTarget(issuer, ids, redirectUri);
      system.ours = { auth: authTarget };
      system.workloads.push(...authWorkloads(authTarget));
    } catch (error) {
      system.failures.push({
        server: `auth-server-${db}`,
        detail: `discovery: ${errorText(error)}`,
        workloads: [...AUTH_WORKLOADS],
      });
    }
  }

  if (needOrders) {
    try {
      const { entry, nodeFlags } = await ourEntry('orders', context.start);
      const orders = await startServer({
        name: `orders-${db}`,
        nodeFlags: [...nodeFlags, ...profileFlags(context, `orders-${db}`)],
        cwd: join(REPO_DIR, 'apps/orders'),
        entry,
        port: ordersPort,
        env: {
          PORT: String(ordersPort),
          HOST: '127.0.0.1',
          DATABASE_URL: await databaseUrl('orders'),
          API_KEY: ids.apiKey,
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          SHUTDOWN_PAUSE_MS: '0',
          OIDC_ISSUER: issuer,
          OIDC_CLIENT_ID: ids.webClient.id,
          OIDC_CLIENT_SECRET: ids.webClient.secret,
          RESOURCE_ID: ids.jwtResource.id,
          RESOURCE_SECRET: ids.jwtResource.secret,
          SESSION_SECRET: ids.sessionSecret,
          BASE_URL: ordersBase,
        },
        logDir: context.logDir,
        ...pinning(context),
      });
      system.servers.push(orders);
      const codeFlow = authTarget?.codeFlow;
      const target: OrdersTarget = {
        baseUrl: orders.baseUrl,
        createHeaders: { 'x-api-key': ids.apiKey },
        listEmail: ids.user.email,
        listUrl: `${orders.baseUrl}/orders`,
        listHeaders: async () => {
          if (!codeFlow) throw new Error('the auth server is not running: no bearer token for GET /orders');
          const [tokens] = await issueUserTokens(codeFlow, 1);
          return { authorization: `Bearer ${tokens?.access_token}` };
        },
      };
      system.workloads.push(ordersCreateWorkload(target), ordersListWorkload(target));
      system.ours = { ...system.ours, orders: target };
    } catch (error) {
      system.failures.push({
        server: `orders-${db}`,
        detail: errorText(error),
        workloads: [...ORDERS_WORKLOADS],
      });
    }
  }
  return system;
}

async function ourAuthTarget(issuer: string, ids: BenchIdentities, redirectUri: string): Promise<AuthTarget> {
  const { url, document } = await loadDiscovery(issuer);
  const codeFlow: CodeFlowSettings = {
    authorizationEndpoint: document.authorization_endpoint,
    tokenEndpoint: document.token_endpoint,
    client: ids.webClient,
    redirectUri,
    scope: ids.webScope,
    user: ids.user,
  };
  return {
    issuer,
    discoveryUrl: url,
    tokenEndpoint: document.token_endpoint,
    introspectionEndpoint: document.introspection_endpoint,
    jwksUri: document.jwks_uri,
    ccClient: ids.ccClient,
    introspector: { id: ids.opaqueResource.id, secret: ids.opaqueResource.secret },
    jwtResource: ids.jwtResource,
    opaqueResource: ids.opaqueResource,
    ...(document.userinfo_endpoint ? { userinfoEndpoint: document.userinfo_endpoint } : {}),
    cheapHashUser: { username: ids.cheapHashUser.username, password: ids.user.password },
    codeFlow,
  };
}
