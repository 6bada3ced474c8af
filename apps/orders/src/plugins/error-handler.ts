import accepts from '@fastify/accepts';
import { isDatabaseUnavailable } from '@oidc-orders/service-kit';
import type { FastifyError } from 'fastify';
import fp from 'fastify-plugin';
import { findDatabaseError, NUMERIC_VALUE_OUT_OF_RANGE, UNIQUE_VIOLATION } from '../db/sql-state.js';
import { DomainError } from '../errors.js';
import { type Page, prefersHtml, sendPage } from '../pages/page.js';

export interface ErrorBody {
  statusCode: number;
  message: string;
  errors?: string[];
}

export interface ErrorReply {
  body: ErrorBody;
  /** Headers the error requires (an RFC 6750 `WWW-Authenticate` challenge, for example). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Server faults are logged with their stack; an unavailable dependency as a warning; client
   * faults only as a short line.
   */
  logLevel: 'error' | 'warn' | 'info';
}

/** Public messages for the unique constraints a client can run into. */
const UNIQUE_CONSTRAINT_MESSAGES: Record<string, string> = {
  users_email_unique: 'A user with this email already exists',
};

interface AjvErrorLike {
  instancePath?: string;
  message?: string;
  params?: { additionalProperty?: string };
}

function describeValidationError(context: string, error: AjvErrorLike): string {
  const location = `${context}${error.instancePath ?? ''}`;
  if (error.params?.additionalProperty !== undefined) {
    return `${location} must NOT have additional property '${error.params.additionalProperty}'`;
  }
  return `${location} ${error.message ?? 'is invalid'}`;
}

/**
 * The single mapping from anything thrown to the wire. Pure, so each rule is unit-tested without
 * a server. Only DomainErrors, Fastify's own 4xx and the database errors below reveal a message;
 * everything else is a generic 500 whose details go to the log only.
 */
export function toErrorReply(error: unknown): ErrorReply {
  if (error instanceof DomainError) {
    return {
      body: { statusCode: error.statusCode, message: error.message },
      ...(Object.keys(error.headers).length > 0 ? { headers: error.headers } : {}),
      logLevel: error.dependencyFailure ? 'warn' : error.statusCode >= 500 ? 'error' : 'info',
    };
  }

  const fastifyError = error as Partial<FastifyError>;
  if (Array.isArray(fastifyError.validation)) {
    const context = fastifyError.validationContext ?? 'request';
    return {
      body: {
        statusCode: 400,
        message: `Invalid request ${context}`,
        errors: fastifyError.validation.map((item) => describeValidationError(context, item)),
      },
      logLevel: 'info',
    };
  }

  const databaseError = findDatabaseError(error);
  if (databaseError?.sqlState === UNIQUE_VIOLATION) {
    const message =
      (databaseError.constraint && UNIQUE_CONSTRAINT_MESSAGES[databaseError.constraint]) ??
      'The request conflicts with an existing record';
    return { body: { statusCode: 409, message }, logLevel: 'info' };
  }
  if (databaseError?.sqlState === NUMERIC_VALUE_OUT_OF_RANGE) {
    // Totals are range-checked before writing; this is the backstop for any other path.
    return { body: { statusCode: 400, message: 'A value is out of range for storage' }, logLevel: 'info' };
  }

  // Fastify's own client errors (malformed JSON, wrong content type, body too large…) have
  // public, fixed messages.
  const statusCode = fastifyError.statusCode;
  if (
    typeof statusCode === 'number' &&
    statusCode >= 400 &&
    statusCode < 500 &&
    fastifyError.code?.startsWith('FST_')
  ) {
    return { body: { statusCode, message: fastifyError.message ?? 'Bad request' }, logLevel: 'info' };
  }

  if (isDatabaseUnavailable(error)) {
    // An outage, not a bug: the caller may retry (another instance, or this one once it is back).
    return {
      body: { statusCode: 503, message: 'The database is temporarily unavailable; retry later' },
      headers: { 'retry-after': '1' },
      logLevel: 'warn',
    };
  }

  return { body: { statusCode: 500, message: 'Internal Server Error' }, logLevel: 'error' };
}

/** The same error for a person: plain words first, the API message folded away as the detail. */
export function pageForError(body: ErrorBody, error: unknown): Page {
  const code = error instanceof DomainError ? error.code : undefined;
  const detail = [body.message, ...(body.errors ?? [])].join('; ');
  if (code === 'SIGN_IN_UNAVAILABLE') {
    return {
      title: 'Signing in is not possible right now',
      message: 'This app cannot reach the sign-in service at the moment. Wait a little, then try again.',
      detail,
      actions: [{ href: '/app', label: 'Try again' }],
    };
  }
  if (body.statusCode === 503) {
    return {
      title: 'Temporarily unavailable',
      message: 'A service this app needs is not answering. Wait a little, then try again.',
      detail,
    };
  }
  if (body.statusCode >= 500) {
    return {
      title: 'Something went wrong',
      message: 'This app had a problem answering. Try again; if it keeps happening, tell the administrator.',
    };
  }
  if (body.statusCode === 401) {
    return {
      title: 'Please sign in',
      message: 'You need to sign in to see this page.',
      detail,
      actions: [{ href: '/login?returnUrl=/app', label: 'Sign in' }],
    };
  }
  if (body.statusCode === 403) {
    return { title: 'Not allowed', message: 'You are not allowed to do this.', detail };
  }
  return { title: 'This request is not valid', message: body.message, detail };
}

/**
 * Registered on the root instance (fastify-plugin) before any route plugin, so every
 * encapsulated route context inherits it.
 */
export const errorHandlerPlugin = fp(
  async (app) => {
    // request.accepts(): pages for browsers, JSON for API clients (src/pages/page.ts).
    await app.register(accepts);
    app.setErrorHandler(async (error, request, reply) => {
      const { body, headers, logLevel } = toErrorReply(error);
      if (logLevel === 'error') {
        request.log.error({ err: error }, 'request failed');
      } else if (logLevel === 'warn') {
        request.log.warn(
          { statusCode: body.statusCode, reason: body.message },
          'request failed: a dependency is unavailable',
        );
      } else {
        request.log.info({ statusCode: body.statusCode, reason: body.message }, 'request rejected');
      }
      if (headers) reply.headers(headers);
      if (prefersHtml(request)) return sendPage(reply, body.statusCode, pageForError(body, error));
      return reply.code(body.statusCode).send(body);
    });

    app.setNotFoundHandler(async (request, reply) => {
      if (prefersHtml(request)) {
        return sendPage(reply, 404, {
          title: 'Page not found',
          message: 'There is no page at this address.',
          detail: `${request.method} ${request.url.split('?')[0]}`,
        });
      }
      return reply
        .code(404)
        .send({ statusCode: 404, message: `Route ${request.method} ${request.url} not found` });
    });
  },
  { name: 'error-handler', fastify: '5.x' },
);
