import { registerMetrics } from '@oidc-orders/service-kit';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import {
  auditEventsCounted,
  auditEventsDropped,
  auditEventWriteFailures,
  backchannelLogoutDeliveries,
  mailsSent,
  rateLimitRefusals,
  signingKeyAge,
  tokensIssued,
} from '../metrics.js';

/**
 * GET /metrics in the Prometheus text format (docs/security-and-operations.md "Metrics"): loopback
 * without a token, elsewhere `Authorization: Bearer <METRICS_TOKEN>`. Registered before the routes
 * so every request is counted and timed by its route pattern.
 */
export const metricsPlugin: FastifyPluginAsync = fp(
  async (app) => {
    await registerMetrics(app, {
      prefix: 'auth_server_',
      token: app.config.metricsToken,
      poolStats: () => app.database.poolStats?.(),
      ping: (timeoutMs) => app.database.ping(timeoutMs),
      metrics: [
        auditEventsCounted,
        auditEventsDropped,
        auditEventWriteFailures,
        tokensIssued,
        rateLimitRefusals,
        backchannelLogoutDeliveries,
        mailsSent,
        signingKeyAge(() => (app.hasDecorator('keyRing') ? app.keyRing : undefined)),
      ],
    });
  },
  { name: 'metrics', dependencies: ['config', 'db'] },
);
