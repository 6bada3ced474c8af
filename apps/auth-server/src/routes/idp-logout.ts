import type { FastifyPluginAsync } from 'fastify';
import { AUDIT_EVENTS, audit } from '../audit.js';
import { PAGES } from '../endpoints.js';
import { takeStartedAuthorization } from '../federation/authorizations.js';
import { forgetFederatedSessions, sessionsStartedBy } from '../federation/federated-sessions.js';
import { LogoutTokenError, verifyLogoutToken } from '../federation/logout-token.js';
import { isProviderEnabled } from '../federation/registry.js';
import { createSsoSessionRepository } from '../interaction/sso-session-repository.js';
import { sendSignedOutPage } from '../pages/signed-out.js';
import { createJtiReplayStore } from '../storage/drizzle/jti-replay.js';

export interface UpstreamLogoutOptions {
  basePath: string;
}

/**
 * `POST /idp/<id>/backchannel-logout`, the `backchannel_logout_uri` we register at each provider
 * (OIDC Back-Channel Logout 1.0 §2.5): a valid logout token ends the SSO sessions that provider's
 * sign-in started (by its `sid`, or every one of its `sub`), each as our own logout ends a session
 * (grants revoked, our relying parties told). Answers 200, or 400 with an OAuth error body (§2.8).
 */
export const upstreamLogoutRoutes: FastifyPluginAsync<UpstreamLogoutOptions> = async (app, { basePath }) => {
  // Only with upstream providers (src/plugins/federation.ts).
  if (app.federation === null) return;
  const { providers, clients } = app.federation;
  const nowSeconds = () => app.protocol.clock.nowSeconds();
  const db = app.database.db;
  const sessions = createSsoSessionRepository(db);
  const replay = createJtiReplayStore(db);

  /**
   * OIDC RP-Initiated Logout 1.0 §3: the provider sends the browser back after its own logout, with
   * our `state`; it continues to the client's post-logout URI remembered with it, or our signed-out
   * page. An unknown state ends on the signed-out page too: the person is signed out here anyway.
   */
  app.get<{ Params: { provider: string }; Querystring: { state?: string } }>(
    PAGES.upstreamSignedOut.path,
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const state = typeof request.query.state === 'string' ? request.query.state : '';
      const started =
        state === ''
          ? null
          : await takeStartedAuthorization(db, state, request.params.provider, nowSeconds());
      if (started?.purpose === 'logout' && started.returnTo) return reply.redirect(started.returnTo, 303);
      return sendSignedOutPage(reply, { frames: [], continueUrl: null, basePath: basePath });
    },
  );

  app.post<{ Params: { provider: string }; Body: Record<string, unknown> }>(
    '/idp/:provider/backchannel-logout',
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const provider = providers.get(request.params.provider);
      const token = typeof request.body?.logout_token === 'string' ? request.body.logout_token : '';
      if (provider === undefined || !(await isProviderEnabled(db, provider.id)) || token === '') {
        return reply.code(400).send({ error: 'invalid_request' });
      }
      const now = nowSeconds();
      try {
        const configuration = await clients.configurationOf(provider);
        const jwksUri = configuration.serverMetadata().jwks_uri ?? '';
        const verified = await verifyLogoutToken(token, {
          issuer: configuration.serverMetadata().issuer,
          clientId: provider.clientId,
          jwksUri,
          nowSeconds: now,
        });
        // §2.6: a logout token seen before is refused (its jti, kept until it expires).
        if (!(await replay.markUsed(`idp-logout:${provider.id}:${verified.jti}`, verified.exp))) {
          throw new LogoutTokenError('logout token replayed');
        }
        const ids = await sessionsStartedBy(db, provider.id, { sid: verified.sid, subject: verified.sub });
        for (const id of ids) {
          const ended = await sessions.delete(id);
          if (ended !== null) await app.sessionLogout.sessionEnded(ended, request);
        }
        await forgetFederatedSessions(db, ids);
        audit(request.log, AUDIT_EVENTS.logout, {
          method: `idp:${provider.id}`,
          count: ids.length,
          reason: 'upstream_backchannel_logout',
        });
        return reply.code(200).send();
      } catch (error) {
        request.log.warn(
          { provider: provider.id, reason: (error as Error).message },
          'upstream logout token refused',
        );
        return reply.code(400).send({ error: 'invalid_request' });
      }
    },
  );
};
