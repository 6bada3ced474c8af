import { runNodeScript, startAuthServer as startKitAuthServer } from '@oidc-orders/service-kit/testing';

const AUTH_SERVER_DIR = 'apps/auth-server';

/** The seed members the orders tests rely on (CONTRACT.md "Seed file"). */
export interface AuthServerSeed {
  clients: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  users: Record<string, unknown>[];
  client_registration?: Record<string, unknown>;
  client_id_metadata_documents?: Record<string, unknown>;
}

/** The real authorization server (apps/auth-server) as a child process on a free port. */
export interface AuthServerProcess {
  readonly issuer: string;
  /** Its DATABASE_URL (`pglite://memory` unless on PostgreSQL). */
  readonly databaseUrl: string;
  /** Everything it printed (pino JSON), for diagnosing a failed test. */
  output(): string;
  /** Stops it (SIGTERM) and starts it again on the same port, database and keys with `seed`. */
  restart(seed: AuthServerSeed): Promise<void>;
  /** Runs `pnpm --filter auth-server users …` (the operator command) as a process on its database. */
  users(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

export { POSTGRES_ADMIN_URL, postgresForThisFile } from '@oidc-orders/service-kit/testing';

/**
 * apps/auth-server through the kit's startAuthServer, on pglite://memory, or on a fresh PostgreSQL
 * database when TEST_DATABASE_URL is set or `options.postgres` asks for one (needed by `users` and
 * `restart`, which open the database from another process or keep it across processes).
 */
export async function startAuthServer(
  seed: AuthServerSeed,
  options: { postgres?: boolean } = {},
): Promise<AuthServerProcess> {
  const server = await startKitAuthServer({ seed, database: options.postgres ? 'postgres' : 'default' });
  const { ISSUER, DATABASE_URL, KEY_ENCRYPTION_KEY } = server.environment;
  const commandEnvironment = {
    ISSUER: ISSUER!,
    DATABASE_URL: DATABASE_URL!,
    KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY!,
  };
  return {
    issuer: server.issuer,
    databaseUrl: server.databaseUrl,
    output: () => server.output(),
    restart: (next) => server.reseed(next),
    users: (args, stdin = '') =>
      runNodeScript(
        AUTH_SERVER_DIR,
        'src/cli/users.ts',
        args,
        { ...commandEnvironment, NODE_ENV: 'production' },
        stdin,
      ),
    stop: () => server.stop(),
  };
}
