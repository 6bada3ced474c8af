import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /** Readiness answers 503 from now on (SIGTERM drain: the load balancer stops sending traffic). */
    beginDraining(): void;
    readonly isDraining: boolean;
  }
}

const READINESS_DB_TIMEOUT_MS = 1000;

/**
 * `GET /health/live`: the process serves HTTP (never touches the database, so a database outage
 * does not get every instance restarted). `GET /health/ready`: the database answers `select 1`
 * within 1 s and the instance is not draining.
 */
export const healthPlugin = fp(
  async (app) => {
    let draining = false;
    app.decorate('beginDraining', () => {
      draining = true;
    });
    app.decorate('isDraining', {
      getter: () => draining,
    });
    // While draining, each response tells a keep-alive client to reconnect, which through the load
    // balancer reaches another instance (RFC 9112 §9.6). Without it a connection pinned to this
    // instance gets Fastify's 503 once the server closes: a failed request in a rolling upgrade.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (draining) reply.header('connection', 'close');
      return payload;
    });

    app.get('/health/live', { logLevel: 'warn' }, async (_request, reply) => {
      return reply.header('cache-control', 'no-store').send({ status: 'ok' });
    });

    app.get('/health/ready', { logLevel: 'warn' }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      if (draining) return reply.code(503).send({ status: 'draining' });
      try {
        await app.database.ping(READINESS_DB_TIMEOUT_MS);
        return reply.send({ status: 'ok' });
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check: database unavailable');
        return reply.code(503).send({ status: 'unavailable' });
      }
    });
  },
  { name: 'health', fastify: '5.x', dependencies: ['db'] },
);
