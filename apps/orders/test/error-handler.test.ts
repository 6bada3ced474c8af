import { describe, expect, it } from 'vitest';
import { findDatabaseError } from '../src/db/sql-state.js';
import {
  BearerTokenError,
  OrderNotFoundError,
  SignInUnavailableError,
  TransactionTimeoutError,
  UpstreamUnavailableError,
} from '../src/errors.js';
import { toErrorReply } from '../src/plugins/error-handler.js';

/** Shaped like drizzle's DrizzleQueryError wrapping the driver's error. */
function wrappedDriverError(code: string, constraint?: string): Error {
  const driverError = Object.assign(new Error('driver says no'), { code, constraint });
  return new Error('Failed query: insert into "users" …', { cause: driverError });
}

describe('toErrorReply', () => {
  it('maps a domain error to its status and public message', () => {
    expect(toErrorReply(new OrderNotFoundError(7))).toEqual({
      body: { statusCode: 404, message: 'Order 7 not found' },
      logLevel: 'info',
    });
    expect(toErrorReply(new TransactionTimeoutError(5000)).body.statusCode).toBe(503);
  });

  it('carries the RFC 6750 challenge of bearer errors: 401 invalid_token, 403 insufficient_scope, bare 401', () => {
    const invalid = toErrorReply(
      new BearerTokenError('invalid_token', 'The access token expired', { realm: 'api' }),
    );
    const scope = toErrorReply(
      new BearerTokenError('insufficient_scope', 'needs orders.read', { realm: 'api', scope: 'orders.read' }),
    );
    const missing = toErrorReply(
      new BearerTokenError('missing', 'A bearer access token is required', { realm: 'api' }),
    );

    expect(invalid.body.statusCode).toBe(401);
    expect(invalid.headers).toEqual({
      'www-authenticate':
        'Bearer realm="api", error="invalid_token", error_description="The access token expired"',
    });
    expect(scope.body.statusCode).toBe(403);
    expect(scope.headers!['www-authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="needs orders.read", scope="orders.read"',
    );
    expect(missing.headers).toEqual({ 'www-authenticate': 'Bearer realm="api"' });
  });

  it('logs an unavailable dependency as a warning, a server fault as an error', () => {
    expect(toErrorReply(new SignInUnavailableError('discovering')).logLevel).toBe('warn');
    expect(toErrorReply(new UpstreamUnavailableError('timeout'))).toMatchObject({
      body: { statusCode: 504 },
      logLevel: 'warn',
    });
    expect(toErrorReply(new TransactionTimeoutError(5000)).logLevel).toBe('error');
  });

  it('maps a unique violation found on `cause` (drizzle-wrapped) to 409', () => {
    const reply = toErrorReply(wrappedDriverError('23505', 'users_email_unique'));

    expect(reply.body).toEqual({ statusCode: 409, message: 'A user with this email already exists' });
  });

  it('maps a unique violation on the error itself to 409 with a generic message for other constraints', () => {
    const reply = toErrorReply(Object.assign(new Error('dup'), { code: '23505', constraint: 'other' }));

    expect(reply.body).toEqual({ statusCode: 409, message: 'The request conflicts with an existing record' });
  });

  it('maps a numeric overflow from the database to 400', () => {
    expect(toErrorReply(wrappedDriverError('22003')).body.statusCode).toBe(400);
  });

  it('formats Ajv validation errors as {statusCode, message, errors}', () => {
    const validationError = Object.assign(new Error('body/quantity must be >= 1'), {
      statusCode: 400,
      code: 'FST_ERR_VALIDATION',
      validationContext: 'body',
      validation: [
        { instancePath: '/quantity', message: 'must be >= 1', params: {} },
        {
          instancePath: '',
          message: 'must NOT have additional properties',
          params: { additionalProperty: 'x' },
        },
      ],
    });

    expect(toErrorReply(validationError).body).toEqual({
      statusCode: 400,
      message: 'Invalid request body',
      errors: ['body/quantity must be >= 1', "body must NOT have additional property 'x'"],
    });
  });

  it('passes Fastify client errors through with their own status', () => {
    const tooLarge = Object.assign(new Error('Request body is too large'), {
      statusCode: 413,
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });

    expect(toErrorReply(tooLarge).body).toEqual({ statusCode: 413, message: 'Request body is too large' });
  });

  it('answers anything else with a generic 500 and keeps the details out of the body', () => {
    const reply = toErrorReply(Object.assign(new Error('password=hunter2 leaked'), { statusCode: 418 }));

    expect(reply).toEqual({ body: { statusCode: 500, message: 'Internal Server Error' }, logLevel: 'error' });
  });

  it('does not take a database error for an unrelated server error', () => {
    expect(toErrorReply(wrappedDriverError('40P01')).body.statusCode).toBe(500);
  });
});

describe('findDatabaseError', () => {
  it('finds the SQLSTATE several causes down', () => {
    const deep = new Error('outer', {
      cause: new Error('middle', { cause: wrappedDriverError('23505', 'c') }),
    });

    expect(findDatabaseError(deep)).toEqual({ sqlState: '23505', constraint: 'c' });
  });

  it('ignores Node errno codes such as EPIPE', () => {
    expect(findDatabaseError(Object.assign(new Error('pipe'), { code: 'EPIPE' }))).toBeUndefined();
  });
});
