import { shutDownGracefullyOnSignals, startTracingWhenConfigured } from '@oidc-orders/service-kit';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { DatabaseStartError } from './db/errors.js';
import { redactUrl, scrubText } from './http/log-redaction.js';
import { KeytabError } from './kerberos/keytab.js';
import { KeyDecryptionError } from './keys/key-encryption.js';
import { SeedError } from './seed.js';

/**
 * Process entry point: parse the environment, build the app, listen, and drain on SIGTERM/SIGINT.
 *
 * Shutdown: readiness answers 503 for SHUTDOWN_PAUSE_MS (so the load balancer stops routing here
 * while in-flight and already-routed requests still succeed), then the server stops accepting
 * connections and waits for in-flight requests, then the database closes, then exit 0. If any of
 * that takes longer than 25 s, exit 1.
 */
const HARD_SHUTDOWN_DEADLINE_MS = 25_000;

/** Errors whose message is already a complete, safe one-line explanation for the operator. */
const OPERATOR_ERRORS = [ConfigError, SeedError, KeyDecryptionError, DatabaseStartError, KeytabError];

function failStart(error: unknown): never {
  const known = OPERATOR_ERRORS.some((type) => error instanceof type);
  const message = error instanceof Error ? error.message : String(error);
  // One line, no stack: the operator needs the variable or entry to fix, not our call graph.
  process.stderr.write(`auth-server: cannot start: ${known ? message : `${message.split('\n')[0]}`}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    failStart(error);
  }

  // Span attributes follow the log's redaction rules (src/http/log-redaction.ts).
  const tracing = await startTracingWhenConfigured({
    defaultServiceName: 'auth-server',
    env: process.env,
    redaction: { redactUrl, scrubText },
  }).catch(failStart);
  // JSON lines in production, under CI and into pipes (log collectors); readable at a terminal.
  const prettyLogs = config.nodeEnv === 'development' && process.stdout.isTTY === true && !process.env.CI;
  const app = await buildApp(config, { prettyLogs, tracingPlugin: tracing?.fastifyPlugin }).catch(failStart);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close().catch(() => {});
    failStart(error);
  }

  shutDownGracefullyOnSignals({
    log: app.log,
    pauseMs: config.shutdownPauseMs,
    timeoutMs: HARD_SHUTDOWN_DEADLINE_MS,
    startDraining: () => app.beginDraining(),
    close: async () => {
      await app.close();
      await tracing?.shutdown();
    },
  });
}

await main();
