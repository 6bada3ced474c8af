import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../src/index.js';

/** What Drizzle throws: its own error with the driver's as `cause`. */
const wrapped = (cause: unknown) => new Error('Failed query: select 1', { cause });
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/**
 * One classifier for both apps. The auth server's former copy did not look
 * inside an AggregateError, which is how node-postgres reports `connect ECONNREFUSED` for a host
 * name that resolves to several addresses (localhost: ::1 and 127.0.0.1).
 */
describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'refused on every address (AggregateError)',
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')]),
    ],
    ['an AggregateError wrapped by Drizzle', wrapped(new AggregateError([withCode('x', 'ECONNREFUSED')]))],
    ['connection reset', wrapped(withCode('read ECONNRESET', 'ECONNRESET'))],
    ['pool connect timeout', wrapped(new Error('timeout exceeded when trying to connect'))],
    ['PGlite closed', wrapped(new Error('PGlite is closed'))],
    ['SQLSTATE class 08', wrapped(withCode('connection failure', '08006'))],
    ['SQLSTATE 53300 too many connections', wrapped(withCode('too many clients', '53300'))],
    ['SQLSTATE 57P01 admin shutdown', wrapped(withCode('terminating connection', '57P01'))],
    ['the ping deadline', new DatabaseUnavailableError('database did not answer select 1 within 5 ms')],
  ])('%s is an outage', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a bug', new TypeError('x is undefined')],
    ['a syntax error (42601)', wrapped(withCode('syntax error', '42601'))],
    ['a unique violation (23505)', wrapped(withCode('duplicate key', '23505'))],
    ['an AggregateError of bugs', new AggregateError([new TypeError('x')])],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
