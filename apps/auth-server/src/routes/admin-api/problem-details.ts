import { isOAuthError } from '@oidc-orders/oauth-core';
import { isDatabaseUnavailable } from '@oidc-orders/service-kit';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AdminActionRefusedError, AdminNotFoundError } from '../../admin/admin-errors.js';
import { InvalidAuditCursorError } from '../../audit/audit-event-store.js';
import { NO_STORE_HEADERS } from '../../plugins/error-handler.js';
import { SeedError } from '../../seed.js';

/** RFC 9457 §3: the media type of problem details. */
export const PROBLEM_JSON = 'application/problem+json';

/** One answer of the area that is not a success: status, stable code, text, extra headers. */
interface Problem {
  status: number;
  error: string;
  detail: string;
  headers: Record<string, string>;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** What went wrong, in the area's terms; the private detail of an OAuthError stays in the log. */
function problemOf(error: unknown): Problem {
  if (isOAuthError(error)) {
    return {
      status: error.status,
      error: error.code,
      detail: error.description ?? error.code,
      headers: error.headers,
    };
  }
  if (error instanceof SeedError) {
    // The file names the problem (entry and member), never a secret.
    return { status: 422, error: 'invalid_seed', detail: error.message, headers: {} };
  }
  if (error instanceof InvalidAuditCursorError) {
    return { status: 400, error: error.code, detail: error.message, headers: {} };
  }
  if (error instanceof AdminNotFoundError)
    return { status: 404, error: 'not_found', detail: error.message, headers: {} };
  if (error instanceof AdminActionRefusedError) {
    return { status: 409, error: error.reason, detail: error.message, headers: {} };
  }
  if (isDatabaseUnavailable(error)) {
    const detail = 'the server is temporarily unavailable, retry later';
    return { status: 503, error: 'temporarily_unavailable', detail, headers: { 'retry-after': '1' } };
  }
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Schema validation and body parsing: Fastify's own message names the member, never a secret.
    return { status: 400, error: 'invalid_request', detail: (error as Error).message, headers: {} };
  }
  return { status: 500, error: 'server_error', detail: 'internal server error', headers: {} };
}

/**
 * The area's error handler: every refusal as RFC 9457 problem details (`type` about:blank, §4.2.1,
 * with the status phrase as `title`, and the stable code as the `error` extension member), the
 * RFC 6750 §3 challenge kept in `WWW-Authenticate`, never cached.
 */
export function sendProblem(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const problem = problemOf(error);
  const detail = isOAuthError(error) ? error.detail : undefined;
  if (problem.status >= 500)
    request.log.error({ err: error, error: problem.error }, 'admin api request failed');
  else request.log.info({ error: problem.error, detail }, 'admin api request refused');
  return reply
    .code(problem.status)
    .headers({ ...problem.headers, ...NO_STORE_HEADERS })
    .type(PROBLEM_JSON)
    .send({
      type: 'about:blank',
      title: TITLES[problem.status] ?? 'Error',
      status: problem.status,
      detail: problem.detail,
      error: problem.error,
    });
}
