import type { FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { type ConsolePageContext, renderNotFoundPage } from '../../pages/admin/pages.js';
import { sendHtml } from '../../pages/respond.js';
import type { PageContext } from '../authorization-reply.js';
import { operatorOf } from './guard.js';

/** A console path: under the table's /admin (src/endpoints.ts). */
export const consolePath = (suffix: string) => `${ENDPOINTS.adminConsole.path}${suffix}`;

/** How many users or events a console page lists. */
export const CONSOLE_PAGE_SIZE = 25;

export const queryText = (query: unknown, name: string): string => {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, 200) : '';
};

/** What every console route shares: the page context, the notice of an action, and the replies. */
export function consoleReplies(pageContext: PageContext) {
  const contextOf = (request: FastifyRequest, notice?: ConsolePageContext['notice']): ConsolePageContext => ({
    basePath: pageContext.basePath,
    operator: operatorOf(request).user.username,
    notice,
    language: pageLanguageOf(request),
  });
  return {
    contextOf,
    send: (reply: FastifyReply, body: string, status = 200) => sendHtml(reply, status, body),
    redirectTo: (reply: FastifyReply, location: string) =>
      reply.header('cache-control', 'no-store').redirect(location, 303),
    notFound: (request: FastifyRequest, reply: FastifyReply, section: 'users' | 'clients') =>
      sendHtml(reply, 404, renderNotFoundPage(contextOf(request), section)),
  };
}
