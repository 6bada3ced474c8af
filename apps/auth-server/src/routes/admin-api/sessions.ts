import type { Static } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import {
  adminResponses,
  GrantOverview,
  GrantParams,
  SessionEnded,
  SidParams,
} from '../../schemas/admin-api.js';
import { adminActor } from './admin-token.js';

/** One session or one grant, ended by its id (the user's lists name them). */
export const sessionRoutes: FastifyPluginAsync = async (app) => {
  const sessions = app.admin.sessions;

  // OIDC Back-Channel Logout 1.0 §2.4: the session's relying parties get a logout token.
  app.delete<{ Params: Static<typeof SidParams> }>(
    ENDPOINTS.adminSession.path,
    { schema: { params: SidParams, response: adminResponses(200, SessionEnded) } },
    async (request) => sessions.endSession(request.params.sid, adminActor(request)),
  );

  app.delete<{ Params: Static<typeof GrantParams> }>(
    ENDPOINTS.adminGrant.path,
    { schema: { params: GrantParams, response: adminResponses(200, GrantOverview) } },
    async (request) => sessions.revokeGrant(request.params.grantId, adminActor(request)),
  );
};
