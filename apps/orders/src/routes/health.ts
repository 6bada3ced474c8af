import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { livenessSchema, readinessSchema } from '../schemas/health.js';

/** Unauthenticated probes for the orchestrator. */
const registerHealthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Liveness touches nothing external: a database outage must not get the process restarted.
  app.get('/health/live', { schema: livenessSchema }, async () => ({ status: 'ok' as const }));

  app.get('/health/ready', { schema: readinessSchema }, async (_request, reply) => {
    const readiness = await app.lifecycle.checkReadiness();
    if (readiness.ready) {
      const oidc = app.oidc.status;
      return oidc === 'disabled' ? { status: 'ok' as const } : { status: 'ok' as const, oidc };
    }
    return reply.code(503).send({ statusCode: 503, message: readiness.reason });
  });
};

export const healthRoutes = fp(registerHealthRoutes, {
  name: 'health-routes',
  dependencies: ['lifecycle', 'oidc', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
