import { shutDownGracefullyOnSignals, startTracingWhenConfigured } from '@oidc-orders/service-kit';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { DatabaseUnavailableError } from './errors.js';
import { redactUrl } from './logging.js';

/**
 * Start-up failures are one plain line (no stack trace) naming what to fix, and exit code 1.
 * Values are never printed: DATABASE_URL may hold a password, API_KEY is a secret.
 */
function exitOnStartupFailure(reason: string): never {
  process.stderr.write(`orders: cannot start: ${reason}\n`);
  process.exit(1);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) exitOnStartupFailure(`invalid configuration: ${error.message}`);
  throw error;
}

// Span attributes follow the log's rules: URLs with their query values replaced (src/logging.ts).
const tracing = await startTracingWhenConfigured({
  defaultServiceName: 'orders',
  env: process.env,
  redaction: { redactUrl, scrubText: (text) => text },
}).catch((error: unknown) =>
  exitOnStartupFailure(`tracing: ${error instanceof Error ? error.message : String(error)}`),
);

let app: FastifyInstance | undefined;
try {
  // Loads every plugin: dependency declarations are checked, the database is opened, pinged within
  // DATABASE_CONNECT_TIMEOUT_MS and migrated, all before the port is opened. JSON lines in
  // production, under CI and into pipes (log collectors); readable at a terminal.
  app = await buildApp(config, {
    prettyLogs: config.isDevelopment && process.stdout.isTTY === true && !process.env.CI,
    tracingPlugin: tracing?.fastifyPlugin,
  });
  warnAboutDevelopmentSecrets(app);
  await app.ready();
} catch (error) {
  await app?.close().catch(() => undefined);
  if (error instanceof DatabaseUnavailableError) {
    exitOnStartupFailure(`DATABASE_URL: database unreachable: ${error.message}`);
  }
  exitOnStartupFailure(error instanceof Error ? error.message : String(error));
}

function warnAboutDevelopmentSecrets(app: FastifyInstance): void {
  if (config.apiKeySource === 'generated-dev-only') {
    // The value stays out of the log on purpose; set API_KEY to call the guarded routes.
    app.log.warn(
      'API_KEY is not set: using a random dev-only key generated for this process (NODE_ENV=development)',
    );
  }
  if (config.sessionSecretSource === 'generated-dev-only' && config.oidc.issuer !== undefined) {
    // A per-process secret: sessions and sign-ins in progress do not survive a restart, and a second
    // instance cannot read them. Set SESSION_SECRET to share sessions.
    app.log.warn(
      'SESSION_SECRET is not set: using a random dev-only secret generated for this process (NODE_ENV=development)',
    );
  }
}

try {
  await app.listen({ port: config.port, host: config.host });
} catch (error) {
  await app.close().catch(() => undefined);
  exitOnStartupFailure(
    `cannot listen on HOST:PORT ${config.host}:${config.port}: ${(error as Error).message}`,
  );
}

// SIGTERM/SIGINT: readiness 503 for SHUTDOWN_PAUSE_MS, then close (in-flight requests finish,
// then the database closes), exit 0; exit 1 past SHUTDOWN_TIMEOUT_MS (@oidc-orders/service-kit).
shutDownGracefullyOnSignals({
  log: app.log,
  pauseMs: config.shutdownPauseMs,
  timeoutMs: config.shutdownTimeoutMs,
  startDraining: () => app.lifecycle.startDraining(),
  close: async () => {
    await app.close();
    await tracing?.shutdown();
  },
});
