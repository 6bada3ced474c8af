import {
  type AuthorizationParams,
  type AuthorizationRequest,
  checkPushedAuthorizationRequired,
  checkSignedRequestRequired,
  type ResolvedPushedRequest,
  resolveAuthorizationRequestObject,
  resolvePushedAuthorizationRequest,
  resolveRequestUriByReference,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../endpoints.js';
import { chooseRequestLanguage } from '../i18n/request-language.js';
import type { AuthorizationFlow } from '../interaction/authorization-flow.js';
import { authorizationParamsFrom, collectAuthorizationParams } from '../interaction/authorization-params.js';
import {
  type PageContext,
  type RedirectStatus,
  respondToClient,
  respondToValidationError,
  respondWithOAuthError,
  targetOf,
} from './authorization-reply.js';
import { interactionPageUrl } from './interaction/url.js';

/** `ui_locales` when sent once as a string (a repeated parameter is invalid and ignored here). */
function uiLocalesOf(params: AuthorizationParams): string | undefined {
  const value = params.ui_locales;
  return typeof value === 'string' ? value : undefined;
}

export interface AuthorizeRoutesOptions {
  flow: AuthorizationFlow;
  pageContext: PageContext;
}

/**
 * The authorization endpoint (RFC 6749 §3.1, OIDC Core §3.1.2.1): GET, and POST with a form body
 * ("Authorization Servers MUST support the use of the HTTP GET and POST methods", OIDC Core §3.1.2.1).
 */
export const authorizeRoutes: FastifyPluginAsync<AuthorizeRoutesOptions> = async (app, options) => {
  const { flow, pageContext } = options;
  const requestObjects = {
    keys: app.clientAuthentication.keys,
    replay: app.clientAuthentication.replay,
    issuer: app.config.issuer,
    clock: app.protocol.clock,
    clients: app.protocol.stores.clients,
    fetchRequestObject: app.clientAuthentication.fetchRequestObject,
  };

  async function handle(
    request: FastifyRequest,
    reply: FastifyReply,
    source: unknown,
    status: RedirectStatus,
  ) {
    let params: AuthorizationParams = authorizationParamsFrom(source);
    let authorizationRequest: AuthorizationRequest;
    let pushed: ResolvedPushedRequest | null = null;
    try {
      // RFC 9126 §4: a request_uri from the PAR endpoint stands for the pushed parameters; the
      // code spends them (RFC 9126 §7.3), opening them again before that is allowed.
      pushed = await resolvePushedAuthorizationRequest(params, {
        store: flow.pushedRequests,
        clock: app.protocol.clock,
      });
      // RFC 9101 §5: a request object, by value or by reference (§5.2, a URL the client
      // registered), stands for the parameters it carries.
      const signed =
        pushed === null
          ? ((await resolveRequestUriByReference(params, requestObjects)) ??
            (await resolveAuthorizationRequestObject(params, requestObjects)))
          : null;
      params = pushed?.params ?? signed ?? params;
      authorizationRequest = await flow.validate(params);
      checkPushedAuthorizationRequired(authorizationRequest, pushed !== null);
      checkSignedRequestRequired(authorizationRequest, pushed !== null || signed !== null);
    } catch (error) {
      // OIDC Core §3.1.2.1: the request's `ui_locales` chooses the error page's language too.
      chooseRequestLanguage(request, uiLocalesOf(params));
      return respondToValidationError(reply, error, pageContext, status);
    }
    const target = targetOf(authorizationRequest, pageContext);

    const session = await app.ssoSessions.current(request);
    const step = await flow.nextStep(authorizationRequest, session, null);
    switch (step.kind) {
      case 'error':
        return respondWithOAuthError(reply, target, step.error, pageContext, status);
      case 'complete': {
        // SSO: a live session and a covered (or skipped) consent need no page at all.
        let code: string;
        try {
          code = await flow.issueCode(authorizationRequest, step, pushed?.requestUriHash);
        } catch (error) {
          return respondToValidationError(reply, error, pageContext, status);
        }
        return respondToClient(reply, target, { code }, pageContext, status);
      }
      case 'login':
      case 'otp':
      case 'enrol':
      case 'consent': {
        const browserKey = app.ssoSessions.ensureBrowserKey(request, reply);
        // Validation passed, so no name repeats (but `resource`): single values are the whole request.
        const { params: single, resources } = collectAuthorizationParams(params);
        const stored = {
          params: single,
          resources,
          ...(pushed === null ? {} : { pushedRequestUriHash: pushed.requestUriHash }),
        };
        const interaction = await flow.startInteraction(stored, browserKey);
        return reply
          .header('cache-control', 'no-store')
          .redirect(interactionPageUrl(pageContext, interaction.id, step.kind, single.client_id), 303);
      }
    }
  }

  app.get(ENDPOINTS.authorization.path, (request, reply) => handle(request, reply, request.query, 302));
  app.post(ENDPOINTS.authorization.path, (request, reply) => handle(request, reply, request.body, 302));
};
