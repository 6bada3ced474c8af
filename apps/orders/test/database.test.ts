import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDatabaseUrl } from '@oidc-orders/service-kit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/client.js';
import { users } from '../src/db/schema.js';
import { runInTransactionWithTimeout } from '../src/db/transaction.js';
import { DatabaseUnavailableError, TransactionTimeoutError } from '../src/errors.js';
import { findOrCreateUserIdByEmail } from '../src/repositories/users.js';
import { countRows, createTestDatabase, type TestDatabase } from './helpers/database.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.dispose();
});
beforeEach(async () => {
  await database.reset();
});

describe('parseDatabaseUrl (driver selection)', () => {
  it.each([
    [
      'postgres://postgres@127.0.0.1:5432/test',
      { driver: 'pg', connectionString: 'postgres://postgres@127.0.0.1:5432/test' },
    ],
    ['postgresql://u:p@db/orders', { driver: 'pg', connectionString: 'postgresql://u:p@db/orders' }],
    ['pglite://memory', { driver: 'pglite', dataDir: undefined }],
    ['pglite://.data/orders', { driver: 'pglite', dataDir: '.data/orders' }],
    ['pglite:///var/lib/orders', { driver: 'pglite', dataDir: '/var/lib/orders' }],
  ])('%s', (url, expected) => {
    expect(parseDatabaseUrl(url)).toEqual(expected);
  });

  it.each(['', 'pglite://', 'mysql://db/x', 'postgres:/nope', 'memory'])('rejects %j', (url) => {
    expect(parseDatabaseUrl(url)).toBeUndefined();
  });
});

describe('pglite://<dir>', () => {
  it('persists the database in the directory across restarts', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'orders-pglite-'));
    try {
      const first = await openDatabase(`pglite://${directory}`, { connectTimeoutMs: 5000 });
      await first.migrate();
      await findOrCreateUserIdByEmail(first.db, 'kept@example.com');
      await first.close();

      const reopened = await openDatabase(`pglite://${directory}`, { connectTimeoutMs: 5000 });
      const rows = await reopened.db.select({ email: users.email }).from(users);
      await reopened.close();

      expect(rows).toEqual([{ email: 'kept@example.com' }]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('DatabaseHandle.ping', () => {
  let silentServer: Server;
  let silentPort: number;
  const silentSockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts TCP connections and never answers: the "database hangs" case, on loopback.
    silentServer = createServer((socket) => {
      silentSockets.add(socket);
    });
    await new Promise<void>((resolve) => silentServer.listen(0, '127.0.0.1', resolve));
    silentPort = (silentServer.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of silentSockets) socket.destroy();
    await new Promise((resolve) => silentServer.close(resolve));
  });

  it('answers when the database does', async () => {
    await expect(database.handle.ping(1000)).resolves.toBeUndefined();
  });

  it('gives up after its bound when the server never answers', async () => {
    const hanging = await openDatabase(`postgres://postgres@127.0.0.1:${silentPort}/x`, {
      connectTimeoutMs: 60_000,
    });
    try {
      await expect(hanging.ping(200)).rejects.toThrow(DatabaseUnavailableError);
      await expect(hanging.ping(200)).rejects.toThrow(/within 200 ms/);
    } finally {
      void hanging.close();
    }
  });

  it('reports a refused connection with the driver reason', async () => {
    const refused = await openDatabase('postgres://postgres@127.0.0.1:1/x', { connectTimeoutMs: 2000 });
    try {
      await expect(refused.ping(5000)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await refused.close();
    }
  });
});

describe('runInTransactionWithTimeout', () => {
  it('commits when the work finishes in time', async () => {
    const id = await runInTransactionWithTimeout(database.handle.db, 5000, (tx) =>
      findOrCreateUserIdByEmail(tx, 'ok@example.com'),
    );

    expect(id).toBeGreaterThan(0);
    expect(await countRows(database, 'users')).toBe(1);
  });

  it('rolls back when the work throws, and rethrows the error', async () => {
    const failure = runInTransactionWithTimeout(database.handle.db, 5000, async (tx) => {
      await findOrCreateUserIdByEmail(tx, 'boom@example.com');
      throw new Error('boom');
    });

    await expect(failure).rejects.toThrow('boom');
    expect(await countRows(database, 'users')).toBe(0);
  });

  it('rolls back work that outlives the deadline and throws TransactionTimeoutError', async () => {
    const late = runInTransactionWithTimeout(database.handle.db, 50, async (tx, signal) => {
      await findOrCreateUserIdByEmail(tx, 'late@example.com');
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await tx.insert(users).values({ email: 'after-deadline@example.com' });
    });

    await expect(late).rejects.toThrow(TransactionTimeoutError);
    expect(await countRows(database, 'users')).toBe(0);
  });

  it('scopes statement_timeout to the transaction (SET LOCAL), not the pooled connection', async () => {
    await runInTransactionWithTimeout(database.handle.db, 1234, async () => undefined);

    // Both drivers answer execute() with { rows }; the shared PgDatabase type cannot say so.
    const after = (await database.handle.db.execute(sql`show statement_timeout`)) as {
      rows: { statement_timeout: string }[];
    };
    expect(after.rows[0]!.statement_timeout).toBe('0');
  });
});
