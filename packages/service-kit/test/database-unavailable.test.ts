import { describe, expect, it } from 'vitest';
import {
  classifyDatabaseFailure,
  DatabaseUnavailableError,
  describeDatabaseFailure,
  isDatabaseUnavailable,
} from '../src/index.js';

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
    ['SQLSTATE 57P03 cannot connect now', wrapped(withCode('the database system is starting up', '57P03'))],
    ['SQLSTATE 25006 read-only transaction (a demoted leader)', wrapped(withCode('read-only', '25006'))],
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

/**
 * A failover seen from a pooled connection: which kind it is, whether a write that met it may be
 * sent again (it cannot have committed), and whether the pool's other connections are stale.
 */
describe('classifyDatabaseFailure', () => {
  it.each([
    [
      'read-only transaction (a demoted leader)',
      withCode('cannot execute INSERT in a read-only transaction', '25006'),
      'read_only',
      true,
      true,
    ],
    [
      // An ErrorResponse: the backend died outside its commit (a commit's own wait ends in a reset).
      'admin shutdown (an error answering the statement: rolled back)',
      withCode('terminating connection due to administrator command', '57P01'),
      'admin_shutdown',
      true,
      true,
    ],
    [
      'crash shutdown',
      withCode('terminating connection because of crash of another server process', '57P02'),
      'crash_shutdown',
      false,
      true,
    ],
    [
      'cannot connect now',
      withCode('the database system is starting up', '57P03'),
      'cannot_connect_now',
      true,
      false,
    ],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET'), 'connection_reset', false, true],
    [
      'connection cut mid-statement',
      new Error('Connection terminated unexpectedly'),
      'connection_reset',
      false,
      true,
    ],
    [
      'connection refused',
      withCode('connect ECONNREFUSED', 'ECONNREFUSED'),
      'connection_refused',
      true,
      false,
    ],
    [
      'refused on every address',
      new AggregateError([withCode('x', 'ECONNREFUSED')]),
      'connection_refused',
      true,
      false,
    ],
    [
      'pool connect timeout',
      new Error('timeout exceeded when trying to connect'),
      'connection_refused',
      true,
      false,
    ],
    [
      'another connection exception',
      withCode('connection failure', '08006'),
      'connection_exception',
      false,
      true,
    ],
    ['too many connections', withCode('too many clients', '53300'), 'insufficient_resources', false, false],
    [
      'a pooled connection a proxy already closed (never sent)',
      new Error('Client was closed and is not queryable'),
      'client_closed',
      true,
      true,
    ],
    [
      'a connection that already failed (node-postgres does not send on it)',
      new Error('Client has encountered a connection error and is not queryable'),
      'client_closed',
      true,
      true,
    ],
  ] as const)('%s', (_name, error, kind, neverCommitted, staleConnections) => {
    expect(classifyDatabaseFailure(wrapped(error))).toEqual({ kind, neverCommitted, staleConnections });
  });

  it.each([
    ['a unique violation', withCode('duplicate key', '23505')],
    [
      'a serialization failure (the application retries it, not the pool)',
      withCode('could not serialize', '40001'),
    ],
    ['a bug', new TypeError('x is undefined')],
  ])('%s is not a database failure', (_name, error) => {
    expect(classifyDatabaseFailure(wrapped(error))).toBeNull();
  });
});

describe('describeDatabaseFailure', () => {
  it('names the kind, the SQLSTATE, the driver reason and the statement, never its parameters', () => {
    const driverError = withCode('terminating connection due to administrator command', '57P01');
    const drizzleError = Object.assign(new Error('Failed query: update t set v = $1\nparams: secret-value'), {
      query: 'update t set v = $1',
      params: ['secret-value'],
      cause: driverError,
    });
    const described = describeDatabaseFailure(drizzleError);
    expect(described).toEqual({
      kind: 'admin_shutdown',
      sqlState: '57P01',
      reason: 'terminating connection due to administrator command',
      statement: 'update t set v = $1',
    });
    expect(JSON.stringify(described)).not.toContain('secret-value');
  });

  it('is null for a bug', () => {
    expect(describeDatabaseFailure(new TypeError('x is undefined'))).toBeNull();
  });
});
