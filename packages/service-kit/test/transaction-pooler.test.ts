import { describe, expect, it } from 'vitest';
import { failoverRetryWindow, transactionPoolerMode, UnnamedStatementClient } from '../src/index.js';

/**
 * Behind PgBouncer's transaction pooling (e2e/test/pgbouncer.test.ts runs both apps through it):
 * the opt-in parameter is read and removed before node-postgres sees the URL, and a named
 * statement leaves the client without its name.
 */
describe('transactionPoolerMode', () => {
  it.each([
    ['postgres://u@pooler:6432/auth?pgbouncer=true', 'postgres://u@pooler:6432/auth', true],
    [
      'postgres://u@pooler:6432/auth?sslmode=require&pgbouncer=true',
      'postgres://u@pooler:6432/auth?sslmode=require',
      true,
    ],
    ['postgres://u@pooler:6432/auth?pgbouncer=false', 'postgres://u@pooler:6432/auth', false],
    ['postgres://u@db:5432/auth', 'postgres://u@db:5432/auth', false],
  ])('%s → %s, transaction pooling %s', (url, connectionString, transactionPooling) => {
    expect(transactionPoolerMode(url)).toEqual({ connectionString, transactionPooling });
  });
});

describe('UnnamedStatementClient', () => {
  it('sends a named statement without its name, so no server connection keeps it prepared', () => {
    const client = new UnnamedStatementClient({ connectionString: 'postgres://u@127.0.0.1:1/x' });
    const queued: unknown[] = [];
    // The query is queued until a connection exists (never here); the queue shows what would be sent.
    const pending = client.query({ name: 'auth_find_grant', text: 'select $1::int', values: [1] });
    pending.catch(() => {});
    queued.push(...(client as unknown as { queryQueue: Array<{ name?: string; text: string }> }).queryQueue);
    expect(queued).toEqual([expect.objectContaining({ text: 'select $1::int', name: undefined })]);
  });
});

describe('failoverRetryWindow', () => {
  it('reads failover_retry_ms and removes it from the URL node-postgres gets', () => {
    expect(
      failoverRetryWindow('postgres://u@haproxy:5000/auth?failover_retry_ms=10000&sslmode=require'),
    ).toEqual({
      connectionString: 'postgres://u@haproxy:5000/auth?sslmode=require',
      retryWindowMs: 10000,
    });
    expect(failoverRetryWindow('postgres://u@db/auth')).toEqual({
      connectionString: 'postgres://u@db/auth',
      retryWindowMs: undefined,
    });
  });

  it('refuses a value that is not whole milliseconds', () => {
    expect(() => failoverRetryWindow('postgres://u@db/auth?failover_retry_ms=10s')).toThrow(RangeError);
  });
});
