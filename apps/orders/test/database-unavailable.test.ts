import { isDatabaseUnavailable } from '@oidc-orders/service-kit';
import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../src/errors.js';
import { toErrorReply } from '../src/plugins/error-handler.js';

/**
 * A database outage is answered 503 with Retry-After and a clear message, never a 500 with a
 * stack (the process-level behaviour, with a real PostgreSQL server stopped and restarted, is
 * e2e/test/database-faults.test.ts).
 */

/** What Drizzle throws: its own error with the driver's as `cause`. */
function wrapped(cause: unknown): Error {
  return new Error('Failed query: insert into "orders" …', { cause });
}

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('database unavailable → 503', () => {
  it.each([
    ['connection refused', wrapped(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))],
    ['connection reset', wrapped(withCode('read ECONNRESET', 'ECONNRESET'))],
    [
      'refused on every address',
      wrapped(new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')])),
    ],
    ['pool connect timeout', wrapped(new Error('timeout exceeded when trying to connect'))],
    ['connection cut mid-query', wrapped(new Error('Connection terminated unexpectedly'))],
    [
      'admin shutdown (57P01)',
      wrapped(withCode('terminating connection due to administrator command', '57P01')),
    ],
    ['cannot connect now (57P03)', wrapped(withCode('the database system is starting up', '57P03'))],
    ['connection exception class 08', wrapped(withCode('connection failure', '08006'))],
    ['too many connections (53300)', wrapped(withCode('sorry, too many clients already', '53300'))],
    ['ping failed', new DatabaseUnavailableError('database did not answer select 1 within 1000 ms')],
  ])('%s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    const reply = toErrorReply(error);
    expect(reply.body).toEqual({
      statusCode: 503,
      message: 'The database is temporarily unavailable; retry later',
    });
    expect(reply.headers).toEqual({ 'retry-after': '1' });
    expect(reply.logLevel).toBe('warn');
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a syntax error in SQL', wrapped(withCode('syntax error at or near "selec"', '42601'))],
    ['an undefined table', wrapped(withCode('relation "x" does not exist', '42P01'))],
  ])('%s stays a 500', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
    expect(toErrorReply(error).body.statusCode).toBe(500);
  });
});
