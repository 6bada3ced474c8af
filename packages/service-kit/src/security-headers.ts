import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Helmet's headers on every request of the calling (encapsulated) context, with the middleware
 * built once. `@fastify/helmet` builds it again on every request (its `onRequest` hook calls
 * `helmet(configuration)`, which re-parses the CSP directives and re-validates every option), a
 * cost each page paid for headers that never change. The options are helmet's own.
 */
export function addSecurityHeaders(app: FastifyInstance, options: Readonly<HelmetOptions>): void {
  const setHeaders = helmet(options);
  app.addHook('onRequest', (request, reply, done) => {
    setHeaders(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined));
  });
}
