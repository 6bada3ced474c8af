import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { buildTestApp, type TestAppOptions } from './app.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { FAKE_CLIENT_ID, FAKE_CLIENT_SECRET, type FakeIssuer, startFakeIssuer } from './fake-issuer.js';

/** The file's app signing in at a stand-in issuer; read its members inside hooks and tests. */
export interface SignInApp {
  readonly database: TestDatabase;
  readonly issuer: FakeIssuer;
  readonly app: FastifyInstance;
  /** The app's environment: the issuer and client, then the file's own (SESSION_SECRET, BASE_URL…). */
  readonly environment: Record<string, string>;
}

export interface SignInAppOptions {
  /** A function is called in beforeAll, so it may use what an earlier beforeAll started. */
  environment?: Record<string, string> | (() => Record<string, string>);
  deps?: TestAppOptions['deps'];
  /** Empty the tables before each test, for files whose tests count rows. */
  resetBeforeEach?: boolean;
}

/**
 * The setup the relying-party route files share: a database, a stand-in issuer with the orders
 * client registered, and the app built on both, started in beforeAll and closed in afterAll.
 */
export function useSignInApp(options: SignInAppOptions = {}): SignInApp {
  let started: SignInApp | undefined;
  beforeAll(async () => {
    const database = await createTestDatabase();
    const issuer = await startFakeIssuer();
    const environment = {
      OIDC_ISSUER: issuer.issuer,
      OIDC_CLIENT_ID: FAKE_CLIENT_ID,
      OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
      ...(typeof options.environment === 'function' ? options.environment() : options.environment),
    };
    started = {
      database,
      issuer,
      environment,
      app: await buildTestApp(database, { environment, deps: options.deps }),
    };
  });
  afterAll(async () => {
    await started?.app.close();
    await started?.issuer.close();
    await started?.database.dispose();
  });
  if (options.resetBeforeEach) {
    beforeEach(async () => {
      await started!.database.reset();
    });
  }
  const current = () => {
    if (!started) throw new Error('useSignInApp: read inside a hook or test, after beforeAll');
    return started;
  };
  return {
    get database() {
      return current().database;
    },
    get issuer() {
      return current().issuer;
    },
    get app() {
      return current().app;
    },
    get environment() {
      return current().environment;
    },
  };
}
