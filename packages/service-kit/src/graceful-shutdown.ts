import { setTimeout as sleep } from 'node:timers/promises';

/** The part of a pino logger the shutdown writes to. */
export interface ShutdownLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
  fatal(details: object, message: string): void;
}

export interface GracefulShutdownOptions {
  log: ShutdownLogger;
  /** SHUTDOWN_PAUSE_MS: how long readiness answers 503 while every request is still served. */
  pauseMs: number;
  /** From the signal to a forced exit 1, below the orchestrator's grace period before SIGKILL. */
  timeoutMs: number;
  /** Turns readiness to 503 (the app's draining flag). */
  startDraining(): void;
  /** Fastify's `app.close()`: stops accepting, waits for in-flight requests, then runs onClose hooks. */
  close(): Promise<void>;
  /** `process.exit` unless a test passes its own. */
  exit?: (code: number) => void;
}

/**
 * Graceful shutdown, in Fastify's lifecycle order:
 * 1. draining: readiness answers 503 for `pauseMs` while every request is still served, long
 *    enough for the load balancer to take this instance out of rotation;
 * 2. close(): the HTTP server stops accepting connections and waits for in-flight requests;
 * 3. `onClose` hooks, which run only after the server has closed: the database closes last;
 * 4. exit 0.
 * A hard deadline (`timeoutMs` from the signal) exits 1 with a log line if any step hangs.
 * Returns the signal handler; a second signal while one shutdown runs is logged and ignored.
 */
export function gracefulShutdown(
  options: GracefulShutdownOptions,
): (signal: NodeJS.Signals) => Promise<void> {
  const { log, pauseMs, timeoutMs } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let started = false;
  return async (signal) => {
    if (started) {
      log.warn({ signal }, 'shutdown already in progress');
      return;
    }
    started = true;
    const hardDeadline = setTimeout(() => {
      log.fatal({ timeoutMs }, 'graceful shutdown did not finish in time; exiting 1');
      exit(1);
    }, timeoutMs);
    hardDeadline.unref();
    log.info({ signal, pauseMs }, 'shutdown: readiness is now 503, still serving');
    options.startDraining();
    await sleep(pauseMs);
    log.info({}, 'shutdown: closing the server, waiting for in-flight requests');
    try {
      await options.close();
    } catch (error) {
      clearTimeout(hardDeadline);
      log.error({ err: error }, 'shutdown failed; exiting 1');
      exit(1);
      return;
    }
    clearTimeout(hardDeadline);
    log.info({}, 'shutdown complete');
    exit(0);
  };
}

/** Runs `gracefulShutdown` on SIGTERM (orchestrators) and SIGINT (Ctrl-C). */
export function shutDownGracefullyOnSignals(options: GracefulShutdownOptions): void {
  const handle = gracefulShutdown(options);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => void handle(signal));
  }
}
