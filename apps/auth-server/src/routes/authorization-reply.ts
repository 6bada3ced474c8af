import {
  type AuthorizationRequest,
  AuthorizationRequestError,
  type OAuthError,
  responseModeRule,
  signAuthorizationResponse,
} from '@oidc-orders/oauth-core';
import type { FastifyReply } from 'fastify';
import { pageLanguageOf } from '../i18n/request-language.js';
import { ENGLISH } from '../i18n/translator.js';
import {
  type AuthorizationResponseTarget,
  authorizationRedirectUrl,
  authorizationResponseParams,
  formActionSourceFor,
} from '../interaction/authorization-response.js';
import { type ErrorPageInput, renderErrorPage } from '../pages/error.js';
import { renderFormPostPage } from '../pages/form-post.js';
import { sendHtml } from '../pages/respond.js';

/** What every browser-facing route needs to answer. */
export interface PageContext {
  issuer: string;
  /** Path of the issuer URL without a trailing slash ('' at the host root). */
  basePath: string;
}

/**
 * Redirect status towards the client: 302 for a GET /authorize, 303 after a form POST
 * (RFC 9700 §4.12: never 307, which would re-post the user's credentials to the client).
 */
export type RedirectStatus = 302 | 303;

export function targetOf(request: AuthorizationRequest, context: PageContext): AuthorizationResponseTarget {
  return {
    redirectUri: request.redirectUri,
    responseMode: request.responseMode,
    state: request.state ?? null,
    issuer: context.issuer,
    client: request.client,
  };
}

/** The CSP `form-action` sources pages of this request need (see src/pages/respond.ts). */
export function formActionSourcesOf(redirectUri: string): string[] {
  const source = formActionSourceFor(redirectUri);
  return source === null ? [] : [source];
}

/**
 * The parameters as sent: as they are, or (a JWT response mode) JARM's single `response`, a JWT
 * signed with the server's keys carrying them all, errors included.
 */
async function responseParameters(
  reply: FastifyReply,
  target: AuthorizationResponseTarget,
  params: Record<string, string>,
): Promise<Record<string, string>> {
  if (!responseModeRule(target.responseMode).signed) return params;
  const { signer, clock, config } = reply.server.protocol;
  return { response: await signAuthorizationResponse(params, target.client, { signer, clock, config }) };
}

/** Sends `result` (`code`, or `error`/`error_description`) to the client by its response mode. */
export async function respondToClient(
  reply: FastifyReply,
  target: AuthorizationResponseTarget,
  result: Readonly<Record<string, string | undefined>>,
  context: PageContext,
  status: RedirectStatus,
) {
  const params = await responseParameters(reply, target, authorizationResponseParams(target, result));
  if (responseModeRule(target.responseMode).delivery === 'form_post') {
    // OAuth 2.0 Form Post Response Mode §2: an auto-submitting form instead of a redirect.
    const page = renderFormPostPage({
      action: target.redirectUri,
      fields: params,
      basePath: context.basePath,
    });
    return sendHtml(reply, 200, page, { formActionSources: formActionSourcesOf(target.redirectUri) });
  }
  return reply.header('cache-control', 'no-store').redirect(authorizationRedirectUrl(target, params), status);
}

export async function respondWithOAuthError(
  reply: FastifyReply,
  target: AuthorizationResponseTarget,
  error: OAuthError,
  context: PageContext,
  status: RedirectStatus,
) {
  reply.log.info({ error: error.code, detail: error.detail }, 'authorization request refused');
  return respondToClient(
    reply,
    target,
    { error: error.code, error_description: error.description },
    context,
    status,
  );
}

export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  page: Omit<ErrorPageInput, 'basePath'>,
  context: PageContext,
) {
  // In the page's language when the request has one (a browser page of the sign-in area).
  const language = reply.request.languageChoice ? pageLanguageOf(reply.request) : undefined;
  return sendHtml(reply, status, renderErrorPage({ ...page, basePath: context.basePath, language }));
}

/**
 * A form whose CSRF token did not verify (expired, from another browser, or forged): 403 with one
 * page for every form, so the words are the same wherever it happens.
 */
export function sendFormExpiredPage(reply: FastifyReply, context: PageContext) {
  const t = reply.request.language ?? ENGLISH;
  return sendErrorPage(
    reply,
    403,
    {
      title: t.text('error.formExpired.title'),
      message: t.text('error.formExpired.message'),
      // One instruction only (not also "return to the application").
      advice: t.text('error.formExpired.advice'),
      code: 'csrf_token_invalid',
    },
    context,
  );
}

/**
 * Answers a failed validation. RFC 6749 §4.1.2.1: when the client or the redirect URI is missing,
 * invalid or mismatching, the server "SHOULD inform the resource owner of the error and MUST NOT
 * automatically redirect the user-agent to the invalid redirection URI": an error page, no Location.
 * Every other error goes back to the (now trusted) redirect URI.
 */
export async function respondToValidationError(
  reply: FastifyReply,
  error: unknown,
  context: PageContext,
  status: RedirectStatus,
) {
  if (!(error instanceof AuthorizationRequestError)) throw error;
  if (!error.redirectable || error.redirectUri === null || error.client === null) {
    reply.log.info(
      { error: error.error.code, detail: error.error.detail },
      'unredirectable authorization error',
    );
    const t = reply.request.language ?? ENGLISH;
    // The description is English (it is also the protocol's `error_description`), so a page in
    // another language says the same in its own words; the error code names the problem exactly.
    const description = t === ENGLISH ? error.error.description : undefined;
    return sendErrorPage(
      reply,
      400,
      {
        title: t.text('error.invalidRequest.title'),
        message: description ?? t.text('error.invalidRequest.message'),
        code: error.error.code,
      },
      context,
    );
  }
  const target: AuthorizationResponseTarget = {
    redirectUri: error.redirectUri,
    responseMode: error.responseMode,
    state: error.state,
    issuer: context.issuer,
    client: error.client,
  };
  return respondWithOAuthError(reply, target, error.error, context, status);
}
