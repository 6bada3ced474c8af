import type { AuthorizationRequest } from '@oidc-orders/oauth-core';
import type { FastifyReply } from 'fastify';
import { ACCOUNT_CLIENT } from '../../account/account-interaction.js';
import { consoleClientOf } from '../../admin/console-interaction.js';
import { PAGES } from '../../endpoints.js';
import type { AuthorizationFlow } from '../../interaction/authorization-flow.js';
import type { Interaction } from '../../interaction/interaction-repository.js';
import {
  formActionSourcesOf,
  type PageContext,
  respondToClient,
  respondToValidationError,
  respondWithOAuthError,
  targetOf,
} from '../authorization-reply.js';
import type { InteractionPurpose } from './options.js';

/** The account page's sign-in: it ends back on /account (max_age=0 when re-authenticating). */
export function accountPurpose(pageContext: PageContext, interaction: Interaction): InteractionPurpose {
  const backToAccount = (reply: FastifyReply) =>
    reply.header('cache-control', 'no-store').redirect(`${pageContext.basePath}${PAGES.account.path}`, 303);
  const maxAge = interaction.request.params.max_age;
  return {
    client: ACCOUNT_CLIENT,
    requirements: {
      client: ACCOUNT_CLIENT,
      scopes: ['openid'],
      prompt: [],
      maxAge: maxAge === undefined ? null : Number(maxAge),
    },
    loginHint: undefined,
    formActionSources: [],
    complete: async (reply) => backToAccount(reply),
    deny: async (reply) => backToAccount(reply),
    fail: async (reply) => backToAccount(reply),
  };
}

/** The operator console's sign-in or step-up: it ends back on /admin, which decides what follows. */
export function consolePurpose(pageContext: PageContext, interaction: Interaction): InteractionPurpose {
  const backToConsole = (reply: FastifyReply) =>
    reply.header('cache-control', 'no-store').redirect(`${pageContext.basePath}/admin`, 303);
  const client = consoleClientOf(interaction.request.params);
  return {
    client,
    requirements: { client, scopes: ['openid'], prompt: [], maxAge: null },
    loginHint: undefined,
    formActionSources: [],
    complete: async (reply) => backToConsole(reply),
    deny: async (reply) => backToConsole(reply),
    fail: async (reply) => backToConsole(reply),
  };
}

/** The /authorize ending: the code, or the error, goes to the client's redirect URI. */
export function authorizationPurpose(
  flow: AuthorizationFlow,
  pageContext: PageContext,
  interaction: Interaction,
  authorizationRequest: AuthorizationRequest,
): InteractionPurpose {
  const target = targetOf(authorizationRequest, pageContext);
  return {
    client: authorizationRequest.client,
    requirements: authorizationRequest,
    loginHint: interaction.request.params.login_hint,
    formActionSources: formActionSourcesOf(authorizationRequest.redirectUri),
    async complete(reply, step) {
      let code: string;
      try {
        code = await flow.issueCode(authorizationRequest, step, interaction.request.pushedRequestUriHash);
      } catch (error) {
        return respondToValidationError(reply, error, pageContext, 303);
      }
      return respondToClient(reply, target, { code }, pageContext, 303);
    },
    async deny(reply) {
      // RFC 6749 §4.1.2.1: "access_denied — The resource owner or authorization server denied the request."
      return respondToClient(
        reply,
        target,
        { error: 'access_denied', error_description: 'the user denied the request' },
        pageContext,
        303,
      );
    },
    async fail(reply, error) {
      return respondWithOAuthError(reply, target, error, pageContext, 303);
    },
  };
}
