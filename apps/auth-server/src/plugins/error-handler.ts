import accepts from '@fastify/accepts';
import {
  authenticationChallenge,
  isOAuthError,
  OAuthError,
  type OAuthErrorCode,
} from '@oidc-orders/oauth-core';
import { annotateActiveSpan, describeDatabaseFailure, isDatabaseUnavailable } from '@oidc-orders/service-kit';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { renderErrorPage } from '../pages/error.js';
import { prefersHtml } from '../pages/negotiate.js';
import { sendHtml } from '../pages/respond.js';

/** How a route reports errors; set per route with `config: { errorStyle }`. */
export type ErrorStyle =
  /** RFC 6749 §5.2 JSON `{error, error_description?}` (token, revocation, introspection). */
  | 'oauth'
  /** As `oauth`, plus an RFC 6750 §3 `WWW-Authenticate: Bearer` challenge (userinfo). */
  | 'bearer';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorStyle?: ErrorStyle;
  }
}

/** RFC 6749 §5.1 / §5.2: token responses and their errors must not be cached. */
export const NO_STORE_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/**
 * The one place an error becomes a response:
 * - `OAuthError` → its status, headers and `{error, error_description?}` (the private `detail` is logged only);
 * - Fastify's own request errors (unparsable body, unsupported media type, body too large, schema
 *   validation) → 400 `invalid_request` (413 for an oversized body), never a 5xx;
 * - the database being unreachable → 503 `temporarily_unavailable`;
 * - anything else → 500 `server_error`, with the details in the log only.
 */
export const errorHandlerPlugin = fp(
  async (app) => {
    // request.accepts(): pages for browsers, JSON for programs (src/pages/negotiate.ts).
    if (!app.hasRequestDecorator('accepts')) await app.register(accepts);
    const basePath = () => (app.hasDecorator('config') ? basePathOf(app.config.issuer) : '');
    app.setErrorHandler((error: FastifyError | OAuthError | Error, request, reply) => {
      const oauthError = toOAuthError(error, request);
      const logDetails = { err: error, error: oauthError.code, detail: oauthError.detail };
      // The outcome in the trace: the RFC 6749 §5.2 code (the private detail stays in the log).
      annotateActiveSpan('oauth.error', oauthError.code);
      if (oauthError.code === 'temporarily_unavailable' && oauthError.status === 503) {
        // An outage of the database, not a bug here: a warning without a stack.
        request.log.warn(
          { error: oauthError.code, detail: oauthError.detail, database: describeDatabaseFailure(error) },
          'request failed: database unavailable',
        );
      } else if (oauthError.status >= 500) request.log.error(logDetails, 'request failed');
      else request.log.info({ error: oauthError.code, detail: oauthError.detail }, 'request rejected');
      const style = request.routeOptions.config?.errorStyle;
      // A person who opened a JSON endpoint in a browser (discovery while the database is down)
      // gets a page; OAuth clients never send `Accept: text/html` first, so they keep RFC 6749 JSON.
      if (style === undefined && request.method === 'GET' && prefersHtml(request)) {
        return sendErrorAsPage(reply, oauthError, basePath());
      }
      return sendOAuthError(reply, oauthError, style ?? 'oauth');
    });

    // Unknown paths: a page for browsers, `{error, error_description}` for programs.
    app.setNotFoundHandler((request, reply) => {
      if (prefersHtml(request)) {
        const page = renderErrorPage({
          title: 'Page not found',
          message: 'There is no page at this address.',
          code: 'not_found',
          basePath: basePath(),
          next: { href: `${basePath()}/`, label: 'Go to the start page' },
        });
        return sendHtml(reply, 404, page);
      }
      return reply
        .code(404)
        .type('application/json; charset=utf-8')
        .send({
          error: 'not_found',
          error_description: `no route for ${request.method} ${request.url.split('?')[0]}`,
        });
    });
  },
  { name: 'error-handler', fastify: '5.x' },
);

function toOAuthError(error: FastifyError | OAuthError | Error, request: FastifyRequest): OAuthError {
  if (isOAuthError(error)) return error;
  if (isDatabaseUnavailable(error)) {
    return new OAuthError('temporarily_unavailable', {
      description: 'the server is temporarily unavailable, retry later',
      detail: 'database unavailable',
      headers: { 'retry-after': '1' },
      cause: error,
    });
  }
  const statusCode = (error as FastifyError).statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // A malformed request that Fastify itself rejected (body parsing, media type, limits, schema).
    const tooLarge = (error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE';
    return new OAuthError('invalid_request', {
      description: tooLarge ? 'the request body is too large' : 'the request is malformed',
      detail: `${(error as FastifyError).code ?? 'client error'}: ${error.message} (${request.method} ${request.url.split('?')[0]})`,
      status: tooLarge ? 413 : 400,
    });
  }
  return new OAuthError('server_error', {
    description: 'internal server error',
    detail: error.message,
    cause: error,
  });
}

function sendOAuthError(reply: FastifyReply, error: OAuthError, style: ErrorStyle) {
  const headers: Record<string, string> = { ...error.headers };
  if (style === 'bearer' && !hasHeader(headers, 'www-authenticate') && error.status < 500) {
    headers['www-authenticate'] = bearerChallenge(error.code, error.description);
  }
  return reply
    .code(error.status)
    .headers({ ...headers, ...NO_STORE_HEADERS })
    .type('application/json; charset=utf-8')
    .send(error.toJSON());
}

function sendErrorAsPage(reply: FastifyReply, error: OAuthError, basePath: string) {
  const unavailable = error.status === 503;
  const page = renderErrorPage({
    title: unavailable
      ? 'Temporarily unavailable'
      : error.status >= 500
        ? 'Something went wrong'
        : 'This request is not valid',
    message: unavailable
      ? 'The service is temporarily unavailable. Please try again in a moment.'
      : error.status >= 500
        ? 'The service had a problem. Please try again in a moment.'
        : 'The request could not be understood.',
    code: error.code,
    basePath,
  });
  reply.headers(error.headers);
  return sendHtml(reply, error.status, page);
}

function basePathOf(issuer: string): string {
  const { pathname } = new URL(issuer);
  return pathname === '/' ? '' : pathname;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/** RFC 6750 §3: `Bearer error="…", error_description="…"` (quotes and backslashes not allowed inside). */
export function bearerChallenge(code?: OAuthErrorCode, description?: string): string {
  return authenticationChallenge('Bearer', [
    ['realm', 'userinfo'],
    ['error', code],
    ['error_description', description || undefined],
  ]);
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode (percent-encoded bytes that are not
 * UTF-8 in the path, FST_ERR_BAD_URL) or an over-long parameter never reaches a route, so neither
 * area's error handler runs. Answered here in the app's usual shape: the error page for a browser
 * (it asks for HTML), RFC 6749 §5.2 JSON otherwise. The URL is not logged (it may carry a secret).
 */
export function answerFrameworkError(basePath: string) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    request.log.info({ error: 'invalid_request', detail: error.code }, 'request rejected');
    if ((request.headers.accept ?? '').includes('text/html')) {
      const page = renderErrorPage({
        title: 'This request is not valid',
        message: 'The request could not be understood.',
        code: 'invalid_request',
        basePath,
      });
      return sendHtml(reply, 400, page);
    }
    const invalid = new OAuthError('invalid_request', { description: 'the request is malformed' });
    return sendOAuthError(reply, invalid, 'oauth');
  };
}
