import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertOrderForEmail } from '../src/repositories/orders.js';
import { buildTestApp, TEST_API_KEY, withApiKey } from './helpers/app.js';
import { countRows, createTestDatabase, type TestDatabase } from './helpers/database.js';

let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database);
});
afterAll(async () => {
  await app?.close();
  await database?.dispose();
});
beforeEach(async () => {
  await database.reset();
});

function placeOrder(body: unknown, headers: Record<string, string> = withApiKey) {
  return app.inject({ method: 'POST', url: '/orders', headers, payload: body as object });
}

describe('POST /orders', () => {
  it('creates the user and the order: 201, Location, {id, email, quantity, status}', async () => {
    const response = await placeOrder({ email: 'alice@example.com', quantity: 3 });

    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['email', 'id', 'quantity', 'status']);
    expect(body).toMatchObject({ email: 'alice@example.com', quantity: 3, status: 'created' });
    expect(Number.isInteger(body.id)).toBe(true);
    expect(response.headers.location).toBe(`/orders/${body.id}`);
    expect(await countRows(database, 'users')).toBe(1);
    expect(await countRows(database, 'orders')).toBe(1);
  });

  it('reuses the existing user for the same e-mail, whatever its case', async () => {
    await placeOrder({ email: 'bob@example.com', quantity: 1 });
    const second = await placeOrder({ email: 'Bob@Example.com', quantity: 2 });

    expect(second.statusCode).toBe(201);
    expect(second.json().email).toBe('bob@example.com');
    expect(await countRows(database, 'users')).toBe(1);
    expect(await countRows(database, 'orders')).toBe(2);
  });

  it('twenty concurrent orders for one new e-mail all succeed and leave exactly one user', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => placeOrder({ email: 'rush@example.com', quantity: 1 })),
    );

    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((response) => response.json().id)).size).toBe(20);
    expect(await countRows(database, 'users')).toBe(1);
    expect(await countRows(database, 'orders')).toBe(20);
  });

  // PostgreSQL only (PGlite has one session): the order statement waits on another session's
  // uncommitted first insert of the same e-mail; once that commits, the statement's own snapshot
  // sees no user, so it inserts no order and placeOrder runs it again.
  if (process.env.TEST_DATABASE_URL) {
    it('an order that waited on a concurrent first insert of its e-mail uses the committed user', async () => {
      const other = new pg.Client({ connectionString: database.url });
      await other.connect();
      try {
        await other.query('begin');
        const { rows } = await other.query<{ id: number }>(
          `insert into users (email) values ('race@example.com') returning id`,
        );
        const pending = placeOrder({ email: 'race@example.com', quantity: 2 });
        // Let the order statement reach the unique index and wait on the other session.
        await waitUntil(async () => (await blockedBackends(other)) > 0);
        await other.query('commit');
        const response = await pending;

        expect(response.statusCode).toBe(201);
        expect(await countRows(database, 'users')).toBe(1);
        const owner = await other.query<{ user_id: number }>('select user_id from orders');
        expect(owner.rows).toEqual([{ user_id: rows[0]!.id }]);
      } finally {
        await other.end();
      }
    });
  }

  // PostgreSQL only: PGlite's driver sends every statement unnamed.
  if (process.env.TEST_DATABASE_URL) {
    it('sends the order statement prepared under its name, so each connection plans it once', async () => {
      const prepared = await database.handle.db.transaction(async (tx) => {
        await insertOrderForEmail(tx, { email: 'plan@example.com', quantity: 1, total: '9.99' });
        await insertOrderForEmail(tx, { email: 'plan@example.com', quantity: 2, total: '19.98' });
        const statements = (await tx.execute(sql`select name from pg_prepared_statements`)) as {
          rows: { name: string }[];
        };
        return statements.rows.map((row) => row.name);
      });

      expect(prepared).toContain('orders_place_order');
      expect(await countRows(database, 'users')).toBe(1);
      expect(await countRows(database, 'orders')).toBe(2);
    });
  }

  it.each([
    ['quantity 0', { email: 'a@example.com', quantity: 0 }],
    ['fractional quantity', { email: 'a@example.com', quantity: 1.5 }],
    ['quantity as a string', { email: 'a@example.com', quantity: '2' }],
    ['quantity as a boolean', { email: 'a@example.com', quantity: true }],
    ['quantity beyond int4', { email: 'a@example.com', quantity: 2_147_483_648 }],
    ['invalid e-mail', { email: 'not-an-email', quantity: 1 }],
    ['missing e-mail', { quantity: 1 }],
    ['missing quantity', { email: 'a@example.com' }],
    ['unknown property (rejected, not stripped)', { email: 'a@example.com', quantity: 1, coupon: 'FREE' }],
  ])('rejects %s with 400 {statusCode, message, errors} and stores nothing', async (_name, body) => {
    const response = await placeOrder(body);

    expect(response.statusCode).toBe(400);
    const payload = response.json();
    expect(Object.keys(payload).sort()).toEqual(['errors', 'message', 'statusCode']);
    expect(payload.statusCode).toBe(400);
    expect(payload.errors.length).toBeGreaterThan(0);
    expect(await countRows(database, 'users')).toBe(0);
    expect(await countRows(database, 'orders')).toBe(0);
  });

  it('names the unknown property in the validation errors', async () => {
    const response = await placeOrder({ email: 'a@example.com', quantity: 1, coupon: 'FREE' });

    expect(response.json().errors).toEqual([expect.stringContaining("'coupon'")]);
  });

  it('lists every violated rule, not only the first', async () => {
    const response = await placeOrder({ email: 'nope', quantity: 0 });

    expect(response.json().errors).toHaveLength(2);
  });

  it('answers malformed JSON with 400 {statusCode, message}', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { ...withApiKey, 'content-type': 'application/json' },
      payload: '{"email":',
    });

    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json()).sort()).toEqual(['message', 'statusCode']);
  });

  it('a total beyond numeric(12,2) is a 400, never a 500, and nothing is stored', async () => {
    const response = await placeOrder({ email: 'whale@example.com', quantity: 2_147_483_647 });

    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json()).sort()).toEqual(['message', 'statusCode']);
    expect(await countRows(database, 'users')).toBe(0);
  });

  it('a wrong x-api-key is 403 even with an invalid body, and nothing is stored', async () => {
    const response = await placeOrder({ email: 'nope', quantity: -1, extra: true }, { 'x-api-key': 'wrong' });

    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ statusCode: 403, message: expect.any(String) });
    expect(await countRows(database, 'users')).toBe(0);
  });

  it('a wrong x-api-key with a valid body is 403 and nothing is stored', async () => {
    const response = await placeOrder(
      { email: 'eve@example.com', quantity: 1 },
      { 'x-api-key': `${TEST_API_KEY}x` },
    );

    expect(response.statusCode).toBe(403);
    expect(await countRows(database, 'orders')).toBe(0);
  });

  it('a missing x-api-key is 403 like a wrong one (the orders specification), and the handler never runs', async () => {
    const response = await placeOrder({ email: 'eve@example.com', quantity: 1 }, {});

    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ statusCode: 403, message: expect.any(String) });
    expect(await countRows(database, 'orders')).toBe(0);
    expect(await countRows(database, 'users')).toBe(0);
  });

  it('an empty x-api-key is 403 and nothing is stored', async () => {
    const response = await placeOrder({ email: 'eve@example.com', quantity: 1 }, { 'x-api-key': '' });

    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ statusCode: 403, message: expect.any(String) });
    expect(await countRows(database, 'orders')).toBe(0);
  });
});

describe('GET /orders/:id', () => {
  it('answers 200 {id, checkedAt, total, createdAt, email} with the exact total', async () => {
    const created = (await placeOrder({ email: 'carol@example.com', quantity: 3 })).json();

    const response = await app.inject({ method: 'GET', url: `/orders/${created.id}`, headers: withApiKey });

    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['checkedAt', 'createdAt', 'email', 'id', 'total']);
    expect(body).toMatchObject({ id: created.id, total: '29.97', email: 'carol@example.com' });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
    expect(new Date(body.checkedAt).toISOString()).toBe(body.checkedAt);
  });

  it('an unknown id is 404 {statusCode, message}', async () => {
    const response = await app.inject({ method: 'GET', url: '/orders/424242', headers: withApiKey });

    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ statusCode: 404, message: expect.stringContaining('424242') });
  });

  it('an id beyond the serial range is 404, not a database error', async () => {
    const response = await app.inject({ method: 'GET', url: '/orders/99999999999', headers: withApiKey });

    expect(response.statusCode).toBe(404);
  });

  it.each(['abc', '0', '-1', '1.5', '01'])('id %s is not a positive integer: 400', async (id) => {
    const response = await app.inject({ method: 'GET', url: `/orders/${id}`, headers: withApiKey });

    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json()).sort()).toEqual(['errors', 'message', 'statusCode']);
  });

  it('requires the API key: 403 without, 403 with a wrong one', async () => {
    const created = (await placeOrder({ email: 'dan@example.com', quantity: 1 })).json();

    const missing = await app.inject({ method: 'GET', url: `/orders/${created.id}` });
    const wrong = await app.inject({
      method: 'GET',
      url: `/orders/${created.id}`,
      headers: { 'x-api-key': 'no' },
    });

    expect(missing.statusCode).toBe(403);
    expect(missing.json()).toEqual({ statusCode: 403, message: expect.any(String) });
    expect(wrong.statusCode).toBe(403);
  });
});

describe('order pricing', () => {
  it('total = quantity × ORDER_UNIT_PRICE computed exactly', async () => {
    // 0.07 × 3 is 0.21000000000000002 in floating point.
    const pricedApp = await buildTestApp(database, { environment: { ORDER_UNIT_PRICE: '0.07' } });
    try {
      const created = await pricedApp.inject({
        method: 'POST',
        url: '/orders',
        headers: withApiKey,
        payload: { email: 'cents@example.com', quantity: 3 },
      });
      const order = await pricedApp.inject({
        method: 'GET',
        url: `/orders/${created.json().id}`,
        headers: withApiKey,
      });

      expect(order.json().total).toBe('0.21');
    } finally {
      await pricedApp.close();
    }
  });
});

describe('order transaction timeout', () => {
  it('rolls back the user upsert and the order and answers 503 when the deadline passes', async () => {
    let reachedInsideTransaction = false;
    const slowApp = await buildTestApp(database, {
      environment: { ORDER_TX_TIMEOUT_MS: '100' },
      deps: {
        orderRoutes: {
          // Holds the transaction open past its deadline, then lets the order insert run: the
          // insert must still be rolled back rather than committed after the 503.
          beforeOrderInsert: (signal) =>
            new Promise<void>((resolve) => {
              reachedInsideTransaction = true;
              signal.addEventListener('abort', () => resolve(), { once: true });
            }),
        },
      },
    });
    try {
      const response = await slowApp.inject({
        method: 'POST',
        url: '/orders',
        headers: withApiKey,
        payload: { email: 'slow@example.com', quantity: 1 },
      });

      expect(reachedInsideTransaction).toBe(true);
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ statusCode: 503, message: expect.stringContaining('100 ms') });
      expect(await countRows(database, 'users')).toBe(0);
      expect(await countRows(database, 'orders')).toBe(0);
    } finally {
      await slowApp.close();
    }
  });

  // PostgreSQL only: a statement stuck on a row lock held by another session. PGlite has a single
  // session, so the same situation cannot arise there.
  if (process.env.TEST_DATABASE_URL) {
    it('cancels a statement blocked on a lock (statement_timeout) and answers 503', async () => {
      const locker = new pg.Client({ connectionString: database.url });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query(`insert into users (email) values ('locked@example.com')`);
        const timeoutApp = await buildTestApp(database, { environment: { ORDER_TX_TIMEOUT_MS: '200' } });
        try {
          const response = await timeoutApp.inject({
            method: 'POST',
            url: '/orders',
            headers: withApiKey,
            payload: { email: 'locked@example.com', quantity: 1 },
          });

          expect(response.statusCode).toBe(503);
        } finally {
          await timeoutApp.close();
        }
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      expect(await countRows(database, 'orders')).toBe(0);
    });
  }
});

/** Sessions of this database waiting on a lock (the order statement behind the other session). */
async function blockedBackends(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ waiting: number }>(
    `select count(*)::int as waiting from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return rows[0]!.waiting;
}

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}
