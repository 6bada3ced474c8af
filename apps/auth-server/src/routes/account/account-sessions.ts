import type { FastifyInstance } from 'fastify';
import type { AppAccessRepository } from '../../account/app-access.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import type { AccountPageHelpers } from './account-area.js';

export interface AccountSessionDeps extends AccountPageHelpers {
  appAccess: AppAccessRepository;
}

/**
 * Where the account is in use: its other sessions (end one, or all but this one, each with
 * back-channel logout to the applications signed in through it) and the applications holding
 * access (remove one: its grants and tokens are revoked).
 */
export function registerAccountSessionRoutes(app: FastifyInstance, deps: AccountSessionDeps) {
  const { accountHolder, sendAccountPage } = deps;

  app.post<{ Params: { clientId: string } }>(
    '/account/apps/:clientId/revoke',
    { config: { account: 'change' } },
    async (request, reply) => {
      const current = accountHolder(request);
      const revoked = await deps.appAccess.revoke(current.user.sub, request.params.clientId);
      audit(request.log, AUDIT_EVENTS.appAccessRevoked, {
        sub: current.user.sub,
        client_id: request.params.clientId,
        count: revoked,
      });
      return sendAccountPage(reply, current, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.accessRemoved'),
      });
    },
  );

  app.post('/account/sessions/sign-out-others', { config: { account: 'change' } }, async (request, reply) => {
    const current = accountHolder(request);
    const ended = await app.ssoSessions.endOthers(request, current.session);
    audit(request.log, AUDIT_EVENTS.otherSessionsEnded, {
      sub: current.user.sub,
      sid: current.session.id,
      count: ended,
    });
    return sendAccountPage(reply, current, 200, {
      kind: 'ok',
      text: request.language.text('accountNotice.otherSessionsEnded', { count: ended }),
    });
  });

  // One session of the list: only an id among the person's own other sessions ends anything.
  app.post<{ Params: { id: string } }>(
    '/account/sessions/:id/end',
    { config: { account: 'change' } },
    async (request, reply) => {
      const current = accountHolder(request);
      if (!(await app.ssoSessions.endOne(request, current.session, request.params.id))) {
        return sendAccountPage(reply, current, 404, {
          kind: 'error',
          text: request.language.text('accountNotice.sessionNotFound'),
        });
      }
      audit(request.log, AUDIT_EVENTS.otherSessionsEnded, {
        sub: current.user.sub,
        sid: current.session.id,
        count: 1,
      });
      return sendAccountPage(reply, current, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.sessionEnded'),
      });
    },
  );
}
