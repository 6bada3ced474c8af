import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { isCrossSiteRequest, isValidSignOutCsrfToken, signOutCsrfToken } from '../../oidc/sign-out-guard.js';
import { BACK_TO_APP, sendPage } from '../../pages/page.js';
import { sendSignedOutPage, sendSignOutConfirmation } from '../../pages/sign-out.js';
import { publicBaseUrl } from '../../public-url.js';
import { formFields, revokeQuietly, type SignInApp, type SignInKeys } from './context.js';

/** Where the provider sends the browser after sign-out: the orders client's post_logout_redirect_uri. */
export const SIGNED_OUT_PATH = '/signed-out';

/**
 * OIDC RP-Initiated Logout 1.0: `GET /logout`, `POST /logout` (the confirmation's button) and the
 * page the provider returns to, `GET /signed-out`.
 */
export function registerSignOutRoutes(app: SignInApp, keys: SignInKeys): void {
  const { config } = app;
  /**
   * A same-site navigation (or a client that sends no fetch metadata) signs out at once; a request
   * the browser marks cross-site only gets a question whose button POSTs back with the session's
   * CSRF token, so a link on another site cannot end the session, revoke its refresh token and,
   * through the id_token_hint, the provider's session.
   */
  app.get('/logout', async (request, reply) => {
    const publicBase = publicBaseUrl(config, request);
    if (isCrossSiteRequest(request, new URL(publicBase).origin)) {
      const session = await app.sessions.load(request);
      return sendSignOutConfirmation(reply, {
        action: `${publicBase}/logout`,
        csrfToken: signOutCsrfToken(keys.signOutKey!, session?.id),
        providerOrigin: new URL(config.oidc.issuer!).origin,
      });
    }
    return signOut(app, request, reply);
  });

  app.post('/logout', async (request, reply) => {
    const session = await app.sessions.load(request);
    const csrf = formFields(request.body)?.get('csrf');
    if (!isValidSignOutCsrfToken(keys.signOutKey!, session?.id, csrf)) {
      audit(request.log, AUDIT_EVENTS.logoutRefused, { reason: 'csrf' });
      return sendPage(reply, 403, {
        title: 'Not signed out',
        message:
          'The sign-out form expired or did not come from this application. Sign out again from the app.',
        detail: 'sign-out CSRF token missing or invalid',
      });
    }
    return signOut(app, request, reply);
  });

  app.get(SIGNED_OUT_PATH, async (_request, reply) =>
    sendSignedOutPage(reply, 'You are signed out of the orders application.'),
  );
}

async function signOut(app: SignInApp, request: FastifyRequest, reply: FastifyReply) {
  const { config } = app;
  const session = await app.sessions.end(request, reply);
  reply.header('cache-control', 'no-store');
  if (app.oidc.status !== 'ready') {
    return sendPage(reply, 200, {
      title: 'Signed out',
      message:
        'You are signed out of this application. The sign-in service cannot be reached right now, so you may still be signed in there.',
      actions: [BACK_TO_APP],
    });
  }
  const provider = app.oidc.require();
  if (session?.tokens.refreshToken) await revokeQuietly(request, provider, session.tokens.refreshToken);
  // OIDC RP-Initiated Logout 1.0 §2: the provider ends its session too, then sends the browser
  // back to a page that says so (not `/`, which would start a new sign-in at once).
  const parameters: Record<string, string> = {
    post_logout_redirect_uri: `${publicBaseUrl(config, request)}${SIGNED_OUT_PATH}`,
  };
  if (session?.tokens.idToken) parameters.id_token_hint = session.tokens.idToken;
  else parameters.client_id = config.oidc.clientId!;
  audit(request.log, AUDIT_EVENTS.logout, session ? { sub: session.sub } : {}, 'signed out');
  // 303: after the POST the browser follows with a GET (RFC 9110 §15.4.4).
  return reply.redirect(
    client.buildEndSessionUrl(provider.client, parameters).href,
    request.method === 'POST' ? 303 : 302,
  );
}
