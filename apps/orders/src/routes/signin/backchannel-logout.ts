import { AUDIT_EVENTS, audit } from '../../audit.js';
import { InvalidLogoutTokenError, verifyLogoutToken } from '../../oidc/logout-token.js';
import { formFields, type SignInApp } from './context.js';

/** `POST /backchannel-logout`: the provider ends this app's sessions of a user or provider session. */
export function registerBackChannelLogoutRoute(app: SignInApp): void {
  app.post('/backchannel-logout', async (request, reply) => {
    // OIDC Back-Channel Logout 1.0 §2.8: never cached, 200 on success, 400 when the token is bad.
    reply.header('cache-control', 'no-store');
    const body = formFields(request.body);
    const logoutToken = body?.get('logout_token');
    if (!logoutToken) {
      return reply.code(400).send({ statusCode: 400, message: 'logout_token is required' });
    }
    const provider = app.oidc.require();
    let target: Awaited<ReturnType<typeof verifyLogoutToken>>;
    try {
      target = await verifyLogoutToken(logoutToken, { provider, clientId: app.config.oidc.clientId! });
    } catch (error) {
      if (!(error instanceof InvalidLogoutTokenError)) throw error;
      audit(request.log, AUDIT_EVENTS.backchannelLogoutRejected, { reason: error.message });
      return reply.code(400).send({ statusCode: 400, message: `Invalid logout token: ${error.message}` });
    }
    const ended = await app.sessions.endForLogout(target);
    audit(request.log, AUDIT_EVENTS.backchannelLogout, {
      ...(target.sub ? { sub: target.sub } : {}),
      ...(target.sid ? { sid: target.sid } : {}),
      sessions: ended,
    });
    return reply.code(200).send();
  });
}
