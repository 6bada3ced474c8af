import { randomUUID } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type DatabaseFailureKind,
  type DatabaseHandle,
  databaseFailoverTally,
  isDatabaseUnavailable,
  isRepeatableStatement,
  openDatabase,
  registerMetrics,
} from '../src/index.js';
import { postgresForThisFile, withPostgresClient } from '../src/testing/index.js';

/**
 * The pool after a failover, against the real local PostgreSQL: a backend terminated under a
 * statement (what a leader's shutdown or Patroni's demotion does to its sessions, 57P01) and a
 * session that became read-only (a demoted leader, 25006). A read is sent again, a write the
 * server refused or rolled back is too, a write whose commit state is unknown (its connection cut
 * while it ran) is not; the pool is refreshed each time.
 */

const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const runs = await postgresForThisFile('failover-pool.test.ts', adminUrl);

const tag = `failover-${randomUUID().slice(0, 8)}`;
const table = `failover_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

const allRetries = () => [...databaseFailoverTally.retries.values()].reduce((sum, n) => sum + n, 0);
const snapshot = (tally: Map<DatabaseFailureKind, number>, kind: DatabaseFailureKind) => tally.get(kind) ?? 0;

describe.runIf(runs)('FailoverPool on PostgreSQL', () => {
  let admin: pg.Client;
  let handle: DatabaseHandle<Record<string, never>>;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    // The statements under test sleep as long as the control row says, so a test can hold one
    // running until it has terminated its backend, and the retry then returns at once.
    await admin.query(`create table ${table} (v int); create table ${table}_control (seconds float8)`);
    await admin.query(`insert into ${table}_control values (0)`);
    handle = await openDatabase(
      { driver: 'pg', connectionString: withApplicationName(adminUrl, tag) },
      { schema: {}, migrationsFolder: '/nonexistent', migrationLockKey: 1 },
      { maxConnections: 1 },
    );
  });
  afterAll(async () => {
    await handle?.close();
    await admin?.query(`drop table if exists ${table}; drop table if exists ${table}_control`);
    await admin?.end();
  });

  const setSleep = (seconds: number) => admin.query(`update ${table}_control set seconds = $1`, [seconds]);
  const sleepFromControl = sql.raw(`pg_sleep((select seconds from ${table}_control))`);

  /** Waits until the pool's connection is running a statement, then terminates its backend. */
  async function terminateRunningStatement(): Promise<void> {
    for (;;) {
      const { rows } = await admin.query(
        `select pid from pg_stat_activity where application_name = $1 and state = 'active' and query like '%pg_sleep%'`,
        [tag],
      );
      if (rows.length > 0) {
        await setSleep(0);
        await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('a read whose backend is terminated (57P01) is sent again on a refreshed pool and answers', async () => {
    const retries = snapshot(databaseFailoverTally.retries, 'admin_shutdown');
    const refreshes = snapshot(databaseFailoverTally.poolRefreshes, 'admin_shutdown');
    await setSleep(60);
    // Drizzle's query builders run when awaited: `then` sends the statement now.
    const read = handle.db.execute(sql`select ${sleepFromControl}, 1 as one`).then((answer) => answer);
    await terminateRunningStatement();
    const result = (await read) as { rows: Array<Record<string, unknown>> };
    expect(result.rows[0]).toMatchObject({ one: 1 });
    expect(snapshot(databaseFailoverTally.retries, 'admin_shutdown')).toBe(retries + 1);
    expect(snapshot(databaseFailoverTally.poolRefreshes, 'admin_shutdown')).toBe(refreshes + 1);
  });

  it('a write whose backend is terminated while it runs (57P01 error: rolled back) is sent again and written once', async () => {
    const retries = snapshot(databaseFailoverTally.retries, 'admin_shutdown');
    const failures = snapshot(databaseFailoverTally.failures, 'admin_shutdown');
    await setSleep(60);
    const write = handle.db
      .execute(
        sql.raw(
          `insert into ${table} (v) select 1 from (select pg_sleep((select seconds from ${table}_control))) s`,
        ),
      )
      .then((answer) => answer);
    await terminateRunningStatement();
    await write;
    expect(snapshot(databaseFailoverTally.failures, 'admin_shutdown')).toBe(failures + 1);
    expect(snapshot(databaseFailoverTally.retries, 'admin_shutdown')).toBe(retries + 1);
    const { rows } = await admin.query(`select count(*)::int as n from ${table} where v = 1`);
    expect(rows[0].n).toBe(1);
  });

  it('a transaction whose backend is terminated before its commit is run again as a whole and written once', async () => {
    const retries = allRetries();
    let runs = 0;
    await setSleep(60);
    const transaction = handle.db.transaction(async (tx) => {
      runs++;
      await tx.execute(sql.raw(`insert into ${table} (v) values (4)`));
      await tx.execute(sql`select ${sleepFromControl}`);
    });
    await terminateRunningStatement();
    await transaction;
    expect(runs).toBe(2);
    // Counted under the kind of what Drizzle threw: its `rollback` on the terminated connection.
    expect(allRetries()).toBe(retries + 1);
    const { rows } = await admin.query(`select count(*)::int as n from ${table} where v = 4`);
    expect(rows[0].n).toBe(1);
  });

  it('a transaction that fails for its own reasons is not run again', async () => {
    let runs = 0;
    const outcome = await handle.db
      .transaction(async (tx) => {
        runs++;
        await tx.execute(sql.raw('select 1/0'));
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(isDatabaseUnavailable(outcome)).toBe(false);
    expect(runs).toBe(1);
  });

  it('a write refused by a read-only session (a demoted leader, 25006) is sent again on a new connection', async () => {
    const retries = snapshot(databaseFailoverTally.retries, 'read_only');
    const refreshes = snapshot(databaseFailoverTally.poolRefreshes, 'read_only');
    // The pool's one connection now behaves like a session on a standby.
    await handle.db.execute(sql`set session default_transaction_read_only = on`);
    await handle.db.execute(sql.raw(`insert into ${table} (v) values (2)`));
    const { rows } = await admin.query(`select count(*)::int as n from ${table} where v = 2`);
    expect(rows[0].n).toBe(1);
    expect(snapshot(databaseFailoverTally.retries, 'read_only')).toBe(retries + 1);
    expect(snapshot(databaseFailoverTally.poolRefreshes, 'read_only')).toBe(refreshes + 1);
  });

  it('GET /metrics counts failures, retries and pool refreshes by kind', async () => {
    const app = Fastify();
    await registerMetrics(app, {
      prefix: 'test_',
      token: undefined,
      poolStats: () => handle.poolStats?.(),
      ping: (timeoutMs) => handle.ping(timeoutMs),
      metrics: [],
    });
    const response = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
    await app.close();
    const line = (name: string, kind: DatabaseFailureKind, tally: Map<DatabaseFailureKind, number>) =>
      `test_${name}{kind="${kind}"} ${tally.get(kind)}`;
    expect(response.body).toContain(
      line('database_failures_total', 'admin_shutdown', databaseFailoverTally.failures),
    );
    expect(response.body).toContain(
      line('database_retries_total', 'read_only', databaseFailoverTally.retries),
    );
    expect(response.body).toContain(
      line('database_pool_refreshes_total', 'admin_shutdown', databaseFailoverTally.poolRefreshes),
    );
  });
});

describe('isRepeatableStatement', () => {
  it.each([
    ['select 1', true],
    ['  SELECT "a" from "t" where "id" = $1', true],
    ['show server_version', true],
    ['select * from t for update', false],
    ['select * from t for no key update skip locked', false],
    ["select nextval('s')", false],
    ['select pg_advisory_lock(1)', false],
    ['insert into t values (1)', false],
    ['with moved as (update t set a = 1 returning *) select * from moved', false],
    ['update t set a = 1', false],
  ])('%s → %s', (text, repeatable) => {
    expect(isRepeatableStatement(text)).toBe(repeatable);
  });
});

/**
 * What a client sees behind HAProxy while no node is the leader (a switchover, a failover): the
 * proxy accepts the connection and closes it at once. Nothing was sent, so even a write is sent
 * again, with backoff, until a leader answers; a transaction's connection is waited for the same way.
 */
describe.runIf(runs)('FailoverPool behind a proxy without a leader', () => {
  const target = new URL(adminUrl);
  let leaderAway = false;
  const open = new Set<Socket>();
  let proxy: Server;
  /** No leader from now on; the sessions still open are closed (HAProxy's `shutdown-sessions`). */
  const leaderGoesAway = async () => {
    leaderAway = true;
    for (const socket of open) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
  };
  let handle: DatabaseHandle<Record<string, never>>;

  beforeAll(async () => {
    proxy = createServer((socket) => {
      if (leaderAway) return socket.destroy();
      const upstream = connect(Number(target.port || 5432), target.hostname);
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.pipe(upstream).pipe(socket);
      const close = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const through = new URL(adminUrl);
    through.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    handle = await openDatabase(
      { driver: 'pg', connectionString: through.toString() },
      { schema: {}, migrationsFolder: '/nonexistent', migrationLockKey: 1 },
      { maxConnections: 2 },
    );
    await handle.db.execute(sql.raw(`create table ${table}_proxy (v int)`));
  });
  afterAll(async () => {
    await handle?.db.execute(sql.raw(`drop table if exists ${table}_proxy`)).catch(() => {});
    await handle?.close();
    await new Promise((resolve) => proxy?.close(resolve));
  });

  it('a write whose connection is cut before it was sent waits for the leader and is written once', async () => {
    const retries = allRetries();
    await leaderGoesAway();
    // Drizzle sends when awaited: `then` sends it now.
    const write = handle.db
      .execute(sql.raw(`insert into ${table}_proxy (v) values (1)`))
      .then((answer) => answer);
    // The pool keeps trying (and counting) while the proxy has no leader behind it.
    await vi.waitFor(() => expect(allRetries()).toBeGreaterThan(retries + 1));
    leaderAway = false;
    await write;
    const { rows } = await withPostgresClient(adminUrl, (client) =>
      client.query(`select count(*)::int as n from ${table}_proxy where v = 1`),
    );
    expect(rows[0].n).toBe(1);
  });

  it('a health probe (ping) answers how the database is now: one try, never the retry window', async () => {
    const retries = allRetries();
    await leaderGoesAway();
    // The window is 2 s and the probe's deadline 5 s: a probe that retried would wait for the leader.
    const probe = handle.ping(5000).then(
      () => 'answered',
      () => 'refused',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    leaderAway = false;
    expect(await probe).toBe('refused');
    expect(allRetries()).toBe(retries);
    await expect(handle.ping(5000)).resolves.toBeUndefined();
  });

  it('a write whose connection is cut while it runs (no answer: commit state unknown) is not sent again', async () => {
    const retries = allRetries();
    const resets = snapshot(databaseFailoverTally.failures, 'connection_reset');
    const write = handle.db
      .execute(sql.raw(`insert into ${table}_proxy (v) select 3 from (select pg_sleep(0.3)) s`))
      .then(
        () => null,
        (error: unknown) => error,
      );
    await vi.waitFor(async () => {
      const { rows } = await withPostgresClient(adminUrl, (client) =>
        client.query(
          `select 1 from pg_stat_activity where state = 'active' and query like '%select 3 from%pg_sleep%' and pid <> pg_backend_pid()`,
        ),
      );
      expect(rows.length).toBe(1);
    });
    for (const socket of open) socket.destroy();
    expect(isDatabaseUnavailable(await write)).toBe(true);
    expect(snapshot(databaseFailoverTally.failures, 'connection_reset')).toBe(resets + 1);
    expect(allRetries()).toBe(retries);
    // The server finished the statement after the client lost it: sending it again would have
    // written it twice.
    await vi.waitFor(async () => {
      const { rows } = await withPostgresClient(adminUrl, (client) =>
        client.query(`select count(*)::int as n from ${table}_proxy where v = 3`),
      );
      expect(rows[0].n).toBe(1);
    });
  });

  it('a transaction whose connection is cut after its COMMIT was sent is not run again', async () => {
    // A deferred constraint trigger that sleeps holds the COMMIT running long enough to cut it.
    await handle.db.execute(
      sql.raw(`create table ${table}_commit (v int);
        create function ${table}_slow_commit() returns trigger language plpgsql as
          $$ begin perform pg_sleep(0.3); return null; end $$;
        create constraint trigger slow_commit after insert on ${table}_commit
          deferrable initially deferred for each row execute function ${table}_slow_commit();`),
    );
    let runs = 0;
    const outcome = handle.db
      .transaction(async (tx) => {
        runs++;
        await tx.execute(sql.raw(`insert into ${table}_commit (v) values (5)`));
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    await vi.waitFor(async () => {
      const { rows } = await withPostgresClient(adminUrl, (client) =>
        client.query(`select 1 from pg_stat_activity where state = 'active' and query = 'commit'`),
      );
      expect(rows.length).toBe(1);
    });
    for (const socket of open) socket.destroy();
    expect(isDatabaseUnavailable(await outcome)).toBe(true);
    expect(runs).toBe(1);
    // The server committed after the client lost the answer: running it again would write twice.
    await vi.waitFor(async () => {
      const { rows } = await withPostgresClient(adminUrl, (client) =>
        client.query(`select count(*)::int as n from ${table}_commit`),
      );
      expect(rows[0].n).toBe(1);
    });
    await withPostgresClient(adminUrl, (client) =>
      client.query(`drop table ${table}_commit; drop function ${table}_slow_commit()`),
    );
  });

  it('a transaction waits for its connection the same way', async () => {
    await leaderGoesAway();
    const transaction = handle.db.transaction((tx) =>
      tx.execute(sql.raw(`insert into ${table}_proxy (v) values (2)`)),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    leaderAway = false;
    await transaction;
    const { rows } = await withPostgresClient(adminUrl, (client) =>
      client.query(`select count(*)::int as n from ${table}_proxy where v = 2`),
    );
    expect(rows[0].n).toBe(1);
  });
});
