import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from './app.js';
import { ConfigError, parseConfig } from './config.js';
import { DatabaseUnavailableError } from './errors.js';

/**
 * Start-up failures are one plain line (no stack trace) naming what to fix, and exit code 1.
 * Values are never printed: DATABASE_URL may hold a password, API_KEY is a secret.
 */
function exitOnStartupFailure(reason: string): never {
  process.stderr.write(`orders: cannot start: ${reason}\n`);
  process.exit(1);
}

let config: ReturnType<typeof parseConfig>;
try {
  config = parseConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) exitOnStartupFailure(`invalid configuration: ${error.message}`);
  throw error;
}

// JSON lines in production, under CI and into pipes (log collectors); readable at a terminal.
const app = buildApp(config, {
  prettyLogs: config.isDevelopment && process.stdout.isTTY === true && !process.env.CI,
});

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

try {
  // Loads every plugin: dependency declarations are checked, the database is opened, pinged within
  // DATABASE_CONNECT_TIMEOUT_MS and migrated, all before the port is opened.
  await app.ready();
} catch (error) {
  await app.close().catch(() => undefined);
  if (error instanceof DatabaseUnavailableError) {
    exitOnStartupFailure(`DATABASE_URL: database unreachable: ${error.message}`);
  }
  exitOnStartupFailure(error instanceof Error ? error.message : String(error));
}

try {
  await app.listen({ port: config.port, host: config.host });
} catch (error) {
  await app.close().catch(() => undefined);
  exitOnStartupFailure(
    `cannot listen on HOST:PORT ${config.host}:${config.port}: ${(error as Error).message}`,
  );
}

let shutdownStarted = false;

/**
 * Graceful shutdown, in Fastify's lifecycle order:
 * 1. draining: /health/ready answers 503 for SHUTDOWN_PAUSE_MS while every request is still served,
 *    long enough for the orchestrator to take this instance out of rotation;
 * 2. app.close(): `preClose` hooks (lifecycle marks draining, for closes not started here), then the
 *    HTTP server stops accepting connections and waits for in-flight requests;
 * 3. `onClose` hooks, which run only after the server has closed: the database pool is closed;
 * 4. exit 0.
 * A hard deadline (SHUTDOWN_TIMEOUT_MS from the signal, default 25 s, below the usual 30 s grace
 * period before SIGKILL) exits 1 with a log line if any step hangs.
 */
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (shutdownStarted) {
    app.log.warn({ signal }, 'shutdown already in progress');
    return;
  }
  shutdownStarted = true;
  const hardDeadline = setTimeout(() => {
    app.log.fatal(
      { timeoutMs: config.shutdownTimeoutMs },
      'graceful shutdown did not finish in time; exiting 1',
    );
    process.exit(1);
  }, config.shutdownTimeoutMs);

  app.log.info({ signal, pauseMs: config.shutdownPauseMs }, 'shutdown: readiness is now 503, still serving');
  app.lifecycle.startDraining();
  await sleep(config.shutdownPauseMs);

  app.log.info('shutdown: closing the server, waiting for in-flight requests');
  try {
    await app.close();
  } catch (error) {
    clearTimeout(hardDeadline);
    app.log.error({ err: error }, 'shutdown failed; exiting 1');
    process.exit(1);
  }
  clearTimeout(hardDeadline);
  app.log.info('shutdown complete');
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => void shutdown(signal));
}
