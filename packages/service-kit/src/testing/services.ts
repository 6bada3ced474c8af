import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './free-port.js';
import { type ManagedProcess, startNodeProcess, waitUntilReady } from './node-process.js';
import { createPostgresDatabase, createTestDatabase, type TestDatabaseUrl } from './test-database.js';

const AUTH_SERVER_DIR = 'apps/auth-server';
const ORDERS_DIR = 'apps/orders';

/** What every test-started service shares: loopback only, no shutdown pause, warnings and worse. */
const QUIET_LOOPBACK = { HOST: '127.0.0.1', SHUTDOWN_PAUSE_MS: '0', LOG_LEVEL: 'warn' };

/** Where a started service keeps its data. */
export type ServiceDatabase =
  /** `pglite://memory`, or a fresh PostgreSQL database when TEST_DATABASE_URL is set (default). */
  | 'default'
  /** A fresh PostgreSQL database on TEST_DATABASE_URL's server or the local one, whatever the environment. */
  | 'postgres'
  /** A database the caller owns (not dropped on stop). */
  | { url: string };

async function openServiceDatabase(database: ServiceDatabase, prefix: string): Promise<TestDatabaseUrl> {
  if (database === 'default') return createTestDatabase({ prefix });
  if (database === 'postgres') return createPostgresDatabase(prefix);
  return { url: database.url, drop: async () => {} };
}

/** A started service: its process (restartable on the same port), its database, its logs. */
export interface RunningService {
  /** `http://<host>:<port>` of the service. */
  readonly url: string;
  readonly port: number;
  /** Its DATABASE_URL. */
  readonly databaseUrl: string;
  /** The environment it was started with (without PATH). */
  readonly environment: Readonly<Record<string, string>>;
  /** Everything every run of it printed (pino JSON), for diagnosing a failed test. */
  output(): string;
  /** The current process (a restart replaces it). */
  process(): ManagedProcess;
  /** Stops it (SIGTERM, waits) and starts it again on the same port, database and keys. */
  restart(): Promise<void>;
  /** Stops it and drops its database and temporary files. */
  stop(): Promise<void>;
}

interface ServiceDefinition {
  name: string;
  cwd: string;
  port: number;
  url: string;
  environment: Record<string, string>;
  database: TestDatabaseUrl;
  /** Readiness: GET /health/ready on its loopback port answers 2xx (and the body passes `acceptReady`). */
  acceptReady?: (body: string) => boolean;
  cleanUp?: () => Promise<void>;
}

/** Starts the service, waits for /health/ready, and on failure stops it and shows its logs. */
async function runService(definition: ServiceDefinition): Promise<RunningService> {
  let earlier = '';
  const start = async () => {
    const handle = startNodeProcess(definition.name, definition.cwd, 'src/server.ts', definition.environment);
    try {
      const readyUrl = `http://127.0.0.1:${definition.port}/health/ready`;
      await waitUntilReady(handle, readyUrl, definition.acceptReady, 60_000);
    } catch (error) {
      await handle.stop();
      throw error;
    }
    return handle;
  };
  const cleanUp = async () => {
    await definition.database.drop();
    await definition.cleanUp?.();
  };
  let current: ManagedProcess;
  try {
    current = await start();
  } catch (error) {
    await cleanUp();
    throw error;
  }
  return {
    url: definition.url,
    port: definition.port,
    databaseUrl: definition.database.url,
    environment: definition.environment,
    output: () => earlier + current.output(),
    process: () => current,
    async restart() {
      await current.stop();
      earlier += current.output();
      current = await start();
    },
    async stop() {
      await current.stop();
      await cleanUp();
    },
  };
}

export interface AuthServerOptions {
  /** The seed file's content (CONTRACT.md "Seed file"); written to a private temporary folder. */
  seed: unknown;
  database?: ServiceDatabase;
  /** More environment, over the defaults (e.g. DEVICE_CODE_POLL_INTERVAL, SMTP_URL). */
  env?: Record<string, string>;
  /** The host name of ISSUER (`localhost` for browsers that need a secure context). */
  hostname?: string;
  port?: number;
  /** ISSUER when it is not the service's own address (behind a gateway); readiness still asks the port. */
  publicUrl?: string;
}

/** apps/auth-server; `issuer` is its ISSUER, `seedFile` the file it reads at each start. */
export interface AuthServer extends RunningService {
  readonly issuer: string;
  readonly seedFile: string;
  /** Rewrites the seed file, then restarts (the seed is applied at start). */
  reseed(seed: unknown): Promise<void>;
}

/**
 * apps/auth-server as a child process (`node --import tsx src/server.ts`) on a free port, with a
 * random key-encryption key, seeded from `options.seed`. Resolves once /health/ready answers.
 */
export async function startAuthServer(options: AuthServerOptions): Promise<AuthServer> {
  const port = options.port ?? (await findFreePort());
  const issuer = options.publicUrl ?? `http://${options.hostname ?? '127.0.0.1'}:${port}`;
  const directory = await mkdtemp(join(tmpdir(), 'auth-server-test-'));
  const seedFile = join(directory, 'seed.json');
  const writeSeed = (seed: unknown) => writeFile(seedFile, JSON.stringify(seed), { mode: 0o600 });
  const removeDirectory = () => rm(directory, { recursive: true, force: true });
  let database: TestDatabaseUrl;
  try {
    await writeSeed(options.seed);
    database = await openServiceDatabase(options.database ?? 'default', 'auth_t');
  } catch (error) {
    await removeDirectory();
    throw error;
  }
  const service = await runService({
    name: 'auth-server',
    cwd: AUTH_SERVER_DIR,
    port,
    url: issuer,
    database,
    cleanUp: removeDirectory,
    environment: {
      ...QUIET_LOOPBACK,
      NODE_ENV: 'development',
      PORT: String(port),
      ISSUER: issuer,
      DATABASE_URL: database.url,
      SEED_FILE: seedFile,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
      ...options.env,
    },
  });
  return Object.assign(service, {
    issuer,
    seedFile,
    async reseed(seed: unknown) {
      await writeSeed(seed);
      await service.restart();
    },
  });
}

export interface OrdersServiceOptions {
  /** OIDC_ISSUER. */
  issuer: string;
  /** RESOURCE_SECRET of the `orders-api` resource (bearer tokens are verified against it). */
  resourceSecret: string;
  database?: ServiceDatabase;
  /** More environment, over the defaults (OIDC_CLIENT_SECRET, ALLOWED_CORS_ORIGINS…). */
  env?: Record<string, string>;
  hostname?: string;
  port?: number;
  /** BASE_URL when it is not the service's own address (behind a gateway). */
  publicUrl?: string;
  /** Also wait until the provider is discovered (`"oidc":"ready"`), not merely the database. */
  waitForProvider?: boolean;
}

export interface OrdersService extends RunningService {
  /** Its x-api-key (back-office routes). */
  readonly apiKey: string;
}

/**
 * apps/orders as a child process (`node --import tsx src/server.ts`) on a free port, signing in
 * with client `orders-web` at `issuer` and verifying bearer tokens for `orders-api`. Resolves once
 * /health/ready answers.
 */
export async function startOrdersService(options: OrdersServiceOptions): Promise<OrdersService> {
  const port = options.port ?? (await findFreePort());
  const url = options.publicUrl ?? `http://${options.hostname ?? '127.0.0.1'}:${port}`;
  const apiKey = randomBytes(18).toString('base64url');
  const database = await openServiceDatabase(options.database ?? 'default', 'orders_t');
  const service = await runService({
    name: 'orders',
    cwd: ORDERS_DIR,
    port,
    url,
    database,
    acceptReady: options.waitForProvider ? (body) => body.includes('"oidc":"ready"') : undefined,
    environment: {
      ...QUIET_LOOPBACK,
      NODE_ENV: 'test',
      PORT: String(port),
      BASE_URL: url,
      DATABASE_URL: database.url,
      API_KEY: apiKey,
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      OIDC_ISSUER: options.issuer,
      OIDC_CLIENT_ID: 'orders-web',
      RESOURCE_ID: 'orders-api',
      RESOURCE_SECRET: options.resourceSecret,
      ...options.env,
    },
  });
  return Object.assign(service, { apiKey });
}
