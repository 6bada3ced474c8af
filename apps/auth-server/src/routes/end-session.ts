import {
  type LogoutRequestProblem,
  type ProtocolStores,
  type TokenVerifier,
  validateLogoutRequest,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../audit.js';
import { ENDPOINTS } from '../endpoints.js';
import { collectAuthorizationParams } from '../interaction/authorization-params.js';
import { csrfTokenFor, isValidCsrfToken } from '../interaction/csrf.js';
import type { ErrorPageInput } from '../pages/error.js';
import { sendLogoutConfirmPage } from '../pages/logout-confirm.js';
import { sendSignedOutPage } from '../pages/signed-out.js';
import { type PageContext, sendErrorPage } from './authorization-reply.js';

export interface EndSessionRoutesOptions {
  stores: Pick<ProtocolStores, 'clients'>;
  /** Verifies `id_token_hint` (signature and issuer; expiry ignored). */
  verifier: TokenVerifier;
  pageContext: PageContext;
  /**
   * README "Upstream identity providers": the provider's end_session_endpoint to continue to after
   * ending `sessionId` (then back, and on to `continueUrl`), or `null`.
   */
  upstreamLogout?: (sessionId: string, continueUrl: string | null) => Promise<string | null>;
}

/** The error page per reason a logout request is refused; each says the user is still signed in. */
const REFUSED_LOGOUT_PAGES: Record<
  LogoutRequestProblem,
  Pick<ErrorPageInput, 'title' | 'message' | 'code'>
> = {
  id_token_hint: {
    title: 'Sign-out request not valid',
    message: 'The application sent an invalid sign-out request. You have not been signed out.',
    code: 'invalid_request',
  },
  // RP-Initiated Logout 1.0 §3: never redirected to an address the application did not register.
  post_logout_redirect_uri: {
    title: 'Sign-out request not valid',
    message:
      'The application asked to send you to an address it has not registered, so this request was refused. You have not been signed out.',
    code: 'invalid_request',
  },
};

/**
 * The end-session endpoint (OIDC RP-Initiated Logout 1.0): validation of `id_token_hint`,
 * `client_id` and `post_logout_redirect_uri` is oauth-core's `validateLogoutRequest`; this file
 * asks the user when §2 says it must, ends the SSO session and renders the front-channel page.
 */
export const endSessionRoutes: FastifyPluginAsync<EndSessionRoutesOptions> = async (app, options) => {
  const { pageContext } = options;

  async function logout(request: FastifyRequest, reply: FastifyReply, source: unknown, status: 302 | 303) {
    const { params } = collectAuthorizationParams(source);
    const decision = await validateLogoutRequest(params, {
      verifier: options.verifier,
      clients: options.stores.clients,
    });
    // Nothing is ended on a refused request: the user stays signed in and is told so.
    if (!decision.valid) {
      const next = { href: `${pageContext.basePath}/`, label: 'Go to the start page' };
      return sendErrorPage(reply, 400, { ...REFUSED_LOGOUT_PAGES[decision.problem], next }, pageContext);
    }
    const { client, hintSid, redirectUri, continueUrl } = decision;

    // §2: the OP MUST ask the user when there is no id_token_hint, or when the hint is not of the
    // current session; the confirmation posts back here with a CSRF token bound to this browser and
    // this session, so neither a link nor a cross-site form can sign anyone out.
    const session = await app.ssoSessions.current(request);
    if (session !== null && hintSid !== session.id) {
      const browserKey = app.ssoSessions.browserKey(request);
      const confirmed =
        request.method === 'POST' &&
        params.confirm === 'yes' &&
        browserKey !== null &&
        isValidCsrfToken(params.csrf, browserKey, 'logout', session.id);
      if (!confirmed) {
        return sendLogoutConfirmPage(reply, {
          basePath: pageContext.basePath,
          clientName: client?.clientName ?? null,
          // The client the request named or its hint's audience; the POST carries no hint.
          clientId: client?.clientId,
          state: params.state,
          redirectUri,
          csrfToken: csrfTokenFor(app.ssoSessions.ensureBrowserKey(request, reply), 'logout', session.id),
        });
      }
    }

    const ended = await app.ssoSessions.end(request, reply);
    if (ended !== null) {
      audit(request.log, AUDIT_EVENTS.logout, {
        sub: ended.sub,
        sid: ended.id,
        ...(client ? { client_id: client.clientId } : {}),
      });
    }

    // A session a provider's sign-in started may continue to that provider's logout first.
    const upstream =
      ended && options.upstreamLogout ? await options.upstreamLogout(ended.id, continueUrl) : null;
    if (upstream !== null) return reply.header('cache-control', 'no-store').redirect(upstream, status);

    // OIDC Front-Channel Logout 1.0 §3: the clients' logout URIs load in iframes of the page the OP
    // renders; with a post-logout redirect that page continues to it once they have loaded.
    const frames = app.sessionLogout.frontChannelTargets(request).map((target) => target.uri);
    if (continueUrl !== null && frames.length === 0) {
      return reply.header('cache-control', 'no-store').redirect(continueUrl, status);
    }
    return sendSignedOutPage(reply, { frames, continueUrl, basePath: pageContext.basePath });
  }

  app.get(ENDPOINTS.endSession.path, (request, reply) => logout(request, reply, request.query, 302));
  app.post(ENDPOINTS.endSession.path, (request, reply) => logout(request, reply, request.body, 303));
};
