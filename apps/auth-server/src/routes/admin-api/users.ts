import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import {
  adminResponses,
  GrantOverview,
  SessionOverview,
  SubParams,
  UserChange,
  UserDetail,
  UserSearchQuery,
  UserSummary,
} from '../../schemas/admin-api.js';
import { adminActor } from './admin-token.js';
import { nextPageUrl } from './paging.js';

type BySub = { Params: Static<typeof SubParams> };

/**
 * Users: search with paging, one user with everything an operator needs, and the changes (each an
 * audit event naming the actor). A change answers what it did; repeating it is harmless.
 */
export const userRoutes: FastifyPluginAsync = async (app) => {
  const users = app.admin.users;
  const sessions = app.admin.sessions;
  const issuer = app.config.issuer;

  // A JSON list of users; the next page's URL, when there is one, in `Link: <…>; rel="next"` (RFC 8288).
  app.get<{ Querystring: UserSearchQuery }>(
    ENDPOINTS.adminUsers.path,
    { schema: { querystring: UserSearchQuery, response: adminResponses(200, Type.Array(UserSummary)) } },
    async (request, reply) => {
      const page = await users.search(request.query);
      if (page.next !== null) {
        const next = nextPageUrl(`${issuer}${ENDPOINTS.adminUsers.path}`, request.query, page.next);
        reply.header('link', `<${next}>; rel="next"`);
      }
      return page.users;
    },
  );

  app.get<BySub>(
    ENDPOINTS.adminUser.path,
    { schema: { params: SubParams, response: adminResponses(200, UserDetail) } },
    async (request) => users.detail(request.params.sub),
  );

  const change = (
    path: string,
    operation: (sub: string, by: ReturnType<typeof adminActor>) => Promise<Static<typeof UserChange>>,
  ) =>
    app.post<BySub>(
      path,
      { schema: { params: SubParams, response: adminResponses(200, UserChange) } },
      async (request) => operation(request.params.sub, adminActor(request)),
    );
  change(ENDPOINTS.adminUserDisable.path, (sub, by) => users.changes.disable(sub, by));
  change(ENDPOINTS.adminUserEnable.path, (sub, by) => users.changes.enable(sub, by));
  change(ENDPOINTS.adminUserResetMfa.path, (sub, by) => users.changes.resetMfa(sub, by));
  change(ENDPOINTS.adminUserResetMail.path, (sub, by) => users.changes.sendResetMail(sub, by));

  app.get<BySub>(
    ENDPOINTS.adminUserSessions.path,
    { schema: { params: SubParams, response: adminResponses(200, Type.Array(SessionOverview)) } },
    async (request) => {
      await users.findBySub(request.params.sub);
      return sessions.sessionsOf(request.params.sub);
    },
  );

  // Every session ends, each relying party is told over the back channel, every grant is revoked.
  app.delete<BySub>(
    ENDPOINTS.adminUserSessions.path,
    { schema: { params: SubParams, response: adminResponses(200, UserChange) } },
    async (request) => users.changes.endSessions(request.params.sub, adminActor(request)),
  );

  app.get<BySub>(
    ENDPOINTS.adminUserGrants.path,
    { schema: { params: SubParams, response: adminResponses(200, Type.Array(GrantOverview)) } },
    async (request) => {
      await users.findBySub(request.params.sub);
      return sessions.grantsOf(request.params.sub);
    },
  );
};
