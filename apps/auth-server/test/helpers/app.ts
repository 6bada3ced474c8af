import { type Clock, type RandomSource, type ScryptCost, systemClock } from '@oidc-orders/oauth-core';
import type { FastifyServerOptions, RouteOptions } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { type AppDependencies, buildApp } from '../../src/app.js';
import { type AppConfig, loadConfig } from '../../src/config.js';
import type { ClientKeyOptions } from '../../src/plugins/client-authentication.js';
import type { SeedDocument } from '../../src/schemas/seed.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { TEST_PASSWORD_COST, testSeed } from './seed.js';
import { storeSigningKeys } from './signing-keys.js';

export const TEST_ISSUER = 'https://issuer.example.test';
/** 32 bytes, base64url; test-only. */
export const TEST_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64url');

export type TestApp = Awaited<ReturnType<typeof buildApp>>;

export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: 'pglite://memory',
    ISSUER: TEST_ISSUER,
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    LOG_LEVEL: 'silent',
    ...overrides,
  });
}

export interface TestAppOptions {
  env?: Record<string, string>;
  seed?: SeedDocument;
  clock?: Clock;
  random?: RandomSource;
  /** scrypt cost for the seed's plain-text passwords: TEST_PASSWORD_COST unless `'production'` (the app's default). */
  seedPasswordCost?: ScryptCost | 'production';
  /** Fastify logger options; default `false` (silent). */
  logger?: FastifyServerOptions['logger'];
  /** Reuse a database (e.g. to start a second app on the same keys); otherwise a fresh one. */
  database?: TestDatabase;
  /**
   * A database without signing keys gets the worker's (`'worker'`, the default: generated once,
   * see helpers/signing-keys.ts) or lets the app generate its own as a real first start does
   * (`'generate'`: tests about key generation).
   */
  signingKeys?: 'worker' | 'generate';
  /** How clients' jwks_uri are fetched (shorter cooldowns and timeouts than production). */
  clientKeys?: ClientKeyOptions;
  /** Sees every route as it is registered (test/openapi.test.ts). */
  onRoute?: AppDependencies['onRoute'];
  /** SMTP timings and mail rate limits (test/mail-*.test.ts). */
  mail?: AppDependencies['mail'];
  /** An opened directory (test/directory-*.test.ts, against the slapd fixture); the test closes it. */
  directory?: AppDependencies['directory'];
  /** Upstream provider clients with short timeouts (test/federation.test.ts). */
  upstreamClients?: AppDependencies['upstreamClients'];
  /** Limits and DNS answers for Client ID Metadata Documents (test/client-metadata-documents.test.ts). */
  metadataDocumentFetch?: AppDependencies['metadataDocumentFetch'];
}

/** An app on its own fresh database (PGlite or PostgreSQL, see helpers/database.ts), seeded and ready. */
export async function startTestApp(options: TestAppOptions = {}): Promise<{
  app: TestApp;
  database: TestDatabase;
  close(): Promise<void>;
}> {
  const config = testConfig(options.env);
  const database = options.database ?? (await createTestDatabase());
  let app: TestApp;
  try {
    if (options.signingKeys !== 'generate') {
      await storeSigningKeys(database.handle.db, config.keyEncryptionKey, options.clock ?? systemClock);
    }
    app = await buildTestApp(config, database, options);
  } catch (error) {
    if (!options.database) await database.drop();
    throw error;
  }
  return {
    app,
    database,
    async close() {
      await app.close();
      if (!options.database) await database.drop();
    },
  };
}

/** buildApp on `database`, ready; closed again when it fails to start. */
async function buildTestApp(
  config: AppConfig,
  database: TestDatabase,
  options: TestAppOptions,
): Promise<TestApp> {
  const app = await buildApp(config, {
    database: database.handle,
    seed: options.seed ?? testSeed(),
    ...seedPasswordCost(options.seedPasswordCost ?? TEST_PASSWORD_COST),
    logger: options.logger ?? false,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.clientKeys ? { clientKeys: options.clientKeys } : {}),
    ...(options.onRoute ? { onRoute: options.onRoute } : {}),
    ...(options.mail ? { mail: options.mail } : {}),
    ...(options.directory ? { directory: options.directory } : {}),
    ...(options.upstreamClients ? { upstreamClients: options.upstreamClients } : {}),
    ...(options.metadataDocumentFetch ? { metadataDocumentFetch: options.metadataDocumentFetch } : {}),
  });
  try {
    await app.ready();
  } catch (error) {
    await app.close().catch(() => {});
    throw error;
  }
  return app;
}

function seedPasswordCost(cost: ScryptCost | 'production'): Pick<AppDependencies, 'seedPasswordCost'> {
  return cost === 'production' ? {} : { seedPasswordCost: cost };
}

export function basicAuthorization(id: string, secret: string): string {
  // RFC 6749 §2.3.1: form-urlencode each part before base64.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' } as const;

export function form(params: Record<string, string | string[]>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
  }
  return body.toString();
}

/**
 * One test app for a file, started before its tests, with every route it registered: the area and
 * endpoint-table tests walk `routes` and probe them on `app()`.
 */
export function useAppWithRoutes(): { routes: RouteOptions[]; app: () => TestApp } {
  const routes: RouteOptions[] = [];
  let started: { app: TestApp; close: () => Promise<void> } | undefined;
  beforeAll(async () => {
    // Every optional endpoint on (`client_registration`), so the walk sees every route.
    started = await startTestApp({
      seed: { ...testSeed(), client_registration: { open: true, scope: 'openid' } },
      onRoute: (route) => routes.push(route),
    });
  });
  afterAll(() => started?.close());
  return {
    routes,
    app: () => {
      if (started === undefined) throw new Error('the test app starts in beforeAll');
      return started.app;
    },
  };
}
