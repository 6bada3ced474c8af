import fp from 'fastify-plugin';
import { DatabaseUnavailableError } from '../errors.js';

/** How long readiness waits for `select 1` before calling the database unavailable. */
export const READINESS_PING_TIMEOUT_MS = 1000;

export type Readiness = { ready: true } | { ready: false; reason: string };

export interface Lifecycle {
  readonly draining: boolean;
  /** Readiness turns 503 from now on; requests are still served until the server closes. */
  startDraining(): void;
  checkReadiness(): Promise<Readiness>;
}

declare module 'fastify' {
  interface FastifyInstance {
    lifecycle: Lifecycle;
  }
}

/**
 * Owns the draining flag behind /health/ready. server.ts flips it on SIGTERM/SIGINT and waits
 * SHUTDOWN_PAUSE_MS so the orchestrator stops routing here before the listener goes away. The
 * preClose hook flips it too, so a close() that did not come from a signal never reports ready.
 */
export const lifecyclePlugin = fp(
  async (app) => {
    let draining = false;
    const lifecycle: Lifecycle = {
      get draining() {
        return draining;
      },
      startDraining() {
        draining = true;
      },
      async checkReadiness() {
        if (draining) return { ready: false, reason: 'Shutting down' };
        try {
          await app.database.ping(READINESS_PING_TIMEOUT_MS);
          return { ready: true };
        } catch (error) {
          if (!(error instanceof DatabaseUnavailableError)) throw error;
          app.log.warn({ reason: error.message }, 'readiness check failed');
          return { ready: false, reason: 'Database unavailable' };
        }
      },
    };
    app.decorate('lifecycle', lifecycle);
    app.addHook('preClose', async () => {
      lifecycle.startDraining();
    });
    // While draining, keep-alive clients are told to reconnect (to another instance) after this
    // response, so their idle sockets do not hold the server open until the keep-alive timeout.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (draining) reply.header('connection', 'close');
      return payload;
    });
  },
  { name: 'lifecycle', dependencies: ['db'], fastify: '5.x' },
);
