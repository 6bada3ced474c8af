import type { FastifyPluginAsync } from 'fastify';
import { PAGES } from '../endpoints.js';
import { pageLanguageOf } from '../i18n/request-language.js';
import { type DevelopmentSeedSummary, renderHomePage } from '../pages/home.js';
import { prefersHtml } from '../pages/negotiate.js';
import { sendHtml } from '../pages/respond.js';
import type { PageContext } from './authorization-reply.js';

export interface HomeRoutesOptions {
  pageContext: PageContext;
  /** Set in development only: the landing page lists the seeded clients and users. */
  development: DevelopmentSeedSummary | undefined;
}

/**
 * `GET /`: a landing page for a person who opens the issuer URL, and for programs
 * (`Accept: application/json`) the same links as JSON (README "Pages").
 */
export const homeRoutes: FastifyPluginAsync<HomeRoutesOptions> = async (app, options) => {
  const { pageContext } = options;
  app.get(PAGES.start.path, async (request, reply) => {
    if (prefersHtml(request)) {
      return sendHtml(
        reply,
        200,
        renderHomePage({
          issuer: pageContext.issuer,
          basePath: pageContext.basePath,
          development: options.development,
          language: pageLanguageOf(request),
        }),
      );
    }
    return reply.header('cache-control', 'no-store').send({
      issuer: pageContext.issuer,
      discovery: `${pageContext.issuer}/.well-known/openid-configuration`,
      jwks_uri: `${pageContext.issuer}/jwks`,
      health: `${pageContext.issuer}/health/ready`,
    });
  });
};
