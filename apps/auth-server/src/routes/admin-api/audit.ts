import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { StoredAuditEvent } from '../../audit/audit-event-store.js';
import { ENDPOINTS } from '../../endpoints.js';
import { AuditEventView, AuditQuery, adminResponses } from '../../schemas/admin-api.js';
import { nextPageUrl } from './paging.js';

const view = (stored: StoredAuditEvent) => ({
  time: stored.time,
  event: stored.event,
  sub: stored.sub,
  client_id: stored.clientId,
  ip: stored.ip,
  actor: stored.actor,
  outcome: stored.outcome,
  details: stored.details,
});

/**
 * The stored audit events (src/audit/), newest first, filtered by subject, client, event and time;
 * a JSON list with the next page in `Link: <…>; rel="next"`.
 */
export const auditRoutes: FastifyPluginAsync = async (app) => {
  const base = `${app.config.issuer}${ENDPOINTS.adminAudit.path}`;
  app.get<{ Querystring: AuditQuery }>(
    ENDPOINTS.adminAudit.path,
    { schema: { querystring: AuditQuery, response: adminResponses(200, Type.Array(AuditEventView)) } },
    async (request, reply) => {
      const { sub, client_id: clientId, event, since, until, cursor, limit } = request.query;
      // Events are written in batches: the ones this caller just caused are readable at once.
      await app.auditEventWriter.flush().catch(() => {});
      const page = await app.auditEvents.query({
        ...{ sub, clientId, event, since, until, cursor },
        limit: limit ?? 50,
      });
      if (page.nextCursor !== undefined) {
        reply.header('link', `<${nextPageUrl(base, request.query, page.nextCursor)}>; rel="next"`);
      }
      return page.events.map(view);
    },
  );
};
