import { invalidRequest, type OAuthError } from '@oidc-orders/oauth-core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * Reading the form body of the token, revocation, introspection and (POST) userinfo endpoints.
 *
 * RFC 6749 §3.2 (token) and RFC 7009 §2.1 / RFC 7662 §2.1: parameters are sent with
 * `application/x-www-form-urlencoded`. Anything else (JSON included) is `invalid_request`, decided
 * before the body is parsed, so no other parser ever runs on these endpoints.
 */

/** Form bodies of these endpoints are small; a larger one is refused with 413 before parsing. */
export const OAUTH_FORM_BODY_LIMIT_BYTES = 16 * 1024;

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

function mediaTypeOf(request: FastifyRequest): string | undefined {
  const header = request.headers['content-type'];
  return header?.split(';')[0]?.trim().toLowerCase();
}

/**
 * `onRequest` hook: the body, if any, must be form-encoded. A callback hook: it runs on every
 * token and introspection request and does no I/O, so no promise is made for it (a hot-path
 * saving).
 */
export function requireFormBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  done(formBodyRefusal(request));
}

/** `onRequest` hook for endpoints where a body is optional (POST /userinfo with a header token). */
export function requireFormBodyWhenPresent(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const hasBody =
    request.headers['content-type'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  done(hasBody ? formBodyRefusal(request) : undefined);
}

function formBodyRefusal(request: FastifyRequest): OAuthError | undefined {
  if (mediaTypeOf(request) === FORM_MEDIA_TYPE) return undefined;
  return invalidRequest(
    `the request body must be ${FORM_MEDIA_TYPE}`,
    `content-type: ${request.headers['content-type']}`,
  );
}

export interface FormParameters {
  /** Single-valued parameters. */
  params: Record<string, string>;
  /** Values of parameters allowed to repeat (e.g. RFC 8707 `resource`), in order. */
  repeated: Record<string, string[]>;
}

/**
 * Splits the parsed body into single-valued parameters and the named repeatable ones.
 * RFC 6749 §3.1 / §3.2: "Request and response parameters MUST NOT be included more than once";
 * a repeated one is `invalid_request`. Parameters sent without a value are treated as omitted
 * (RFC 6749 §3.1).
 */
export function readFormParameters(body: unknown, repeatable: readonly string[] = []): FormParameters {
  const params: Record<string, string> = Object.create(null);
  const repeated: Record<string, string[]> = Object.create(null);
  for (const name of repeatable) repeated[name] = [];
  if (body === undefined || body === null || body === '') return { params, repeated };
  if (typeof body !== 'object') throw invalidRequest('the request body is malformed');

  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    const values = (Array.isArray(value) ? value : [value]).filter((item) => item !== '');
    if (values.some((item) => typeof item !== 'string'))
      throw invalidRequest('the request body is malformed');
    if (repeatable.includes(name)) {
      repeated[name] = values as string[];
      continue;
    }
    if (values.length > 1) throw invalidRequest(`parameter ${name.slice(0, 50)} is repeated`);
    if (values.length === 1) params[name] = values[0] as string;
  }
  return { params, repeated };
}
