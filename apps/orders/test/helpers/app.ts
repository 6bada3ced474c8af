import type { FastifyInstance } from 'fastify';
import { type AppDependencies, buildApp } from '../../src/app.js';
import { type AppConfig, loadConfig } from '../../src/config.js';
import type { TestDatabase } from './database.js';

/** A fixed key for tests only; the service never ships a default key. */
export const TEST_API_KEY = 'test-only-api-key-0123456789';

export function testConfig(environment: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: 'pglite://memory',
    API_KEY: TEST_API_KEY,
    LOG_LEVEL: 'silent',
    ...environment,
  });
}

export interface TestAppOptions {
  environment?: Record<string, string>;
  deps?: Omit<AppDependencies, 'database'> & Partial<Pick<AppDependencies, 'database'>>;
}

/** buildApp on the file's shared database, already `ready()`. Close it in afterEach/afterAll. */
export async function buildTestApp(
  database: TestDatabase,
  options: TestAppOptions = {},
): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(options.environment), { database: database.handle, ...options.deps });
  await app.ready();
  return app;
}

export const withApiKey = { 'x-api-key': TEST_API_KEY };
