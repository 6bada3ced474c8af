import type { FastifyRequest } from 'fastify';

/**
 * Proactive content negotiation (RFC 9110 §12.5.1) between the two ways this server answers:
 * JSON for programs, a page for people. A browser's navigation sends `Accept: text/html,…`; fetch,
 * curl and OAuth client libraries send `*∕*` or `application/json`, which keep getting JSON (the
 * first type listed wins ties). Needs `@fastify/accepts` on the root instance.
 */
export function prefersHtml(request: FastifyRequest): boolean {
  return request.accepts().type(['application/json', 'text/html']) === 'text/html';
}
