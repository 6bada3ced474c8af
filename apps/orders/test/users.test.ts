import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findSqlState, NUMERIC_VALUE_OUT_OF_RANGE } from '../src/db/sql-state.js';
import { insertUserWithOrders } from '../src/repositories/users.js';
import { buildTestApp, withApiKey } from './helpers/app.js';
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

function createUser(body: unknown, headers: Record<string, string> = withApiKey) {
  return app.inject({ method: 'POST', url: '/users', headers, payload: body as object });
}

function listUsers(headers: Record<string, string> = withApiKey) {
  return app.inject({ method: 'GET', url: '/users', headers });
}

describe('POST /users', () => {
  it('creates a user without orders: 201 {id, email, orders: []}', async () => {
    const response = await createUser({ email: 'Ann@Example.com' });

    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ id: expect.any(Number), email: 'ann@example.com', orders: [] });
    expect(await countRows(database, 'users')).toBe(1);
  });

  it('creates the user and all its orders in one write, with exact totals', async () => {
    const response = await createUser({
      email: 'ben@example.com',
      orders: [{ quantity: 1 }, { quantity: 3 }],
    });

    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body.orders).toEqual([
      { id: expect.any(Number), quantity: 1, total: '9.99', status: 'created' },
      { id: expect.any(Number), quantity: 3, total: '29.97', status: 'created' },
    ]);
    expect(await countRows(database, 'orders')).toBe(2);
  });

  it('a duplicate e-mail (any case) is 409 {statusCode, message}, from the unique violation', async () => {
    await createUser({ email: 'dup@example.com' });

    const response = await createUser({ email: 'DUP@example.com', orders: [{ quantity: 1 }] });

    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ statusCode: 409, message: expect.stringContaining('email') });
    expect(await countRows(database, 'users')).toBe(1);
    expect(await countRows(database, 'orders')).toBe(0);
  });

  it('an order whose total overflows numeric(12,2) is a 400 and stores neither user nor orders', async () => {
    const response = await createUser({
      email: 'big@example.com',
      orders: [{ quantity: 1 }, { quantity: 2_000_000_000 }],
    });

    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json()).sort()).toEqual(['message', 'statusCode']);
    expect(await countRows(database, 'users')).toBe(0);
    expect(await countRows(database, 'orders')).toBe(0);
  });

  it.each([
    ['unknown top-level property', { email: 'x@example.com', admin: true }],
    ['unknown order property', { email: 'x@example.com', orders: [{ quantity: 1, price: 0 }] }],
    ['quantity 0 in an order', { email: 'x@example.com', orders: [{ quantity: 0 }] }],
    ['invalid e-mail', { email: 'x' }],
    ['orders not an array', { email: 'x@example.com', orders: { quantity: 1 } }],
  ])('rejects %s with 400 and errors', async (_name, body) => {
    const response = await createUser(body);

    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json()).sort()).toEqual(['errors', 'message', 'statusCode']);
    expect(await countRows(database, 'users')).toBe(0);
  });

  it('requires the API key: 403 without, 403 with a wrong one', async () => {
    expect((await createUser({ email: 'k@example.com' }, {})).statusCode).toBe(403);
    expect((await createUser({ email: 'k@example.com' }, { 'x-api-key': 'bad' })).statusCode).toBe(403);
    expect(await countRows(database, 'users')).toBe(0);
  });
});

describe('nested user + orders write at the database level', () => {
  it('a failing second order (numeric overflow in PostgreSQL) rolls back the user and the first order', async () => {
    // Bypasses the route's pricing check on purpose, to prove the transaction, not the check,
    // keeps a half-written user out of the database.
    const failure = await database.handle.db
      .transaction((tx) =>
        insertUserWithOrders(tx, 'half@example.com', [
          { quantity: 1, total: '9.99' },
          { quantity: 1, total: '99999999999.00' },
        ]),
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    expect(findSqlState(failure)).toBe(NUMERIC_VALUE_OUT_OF_RANGE);
    expect(await countRows(database, 'users')).toBe(0);
    expect(await countRows(database, 'orders')).toBe(0);
  });
});

describe('GET /users', () => {
  it('lists every user with orderCount and orders [{id, total}]', async () => {
    await createUser({ email: 'one@example.com', orders: [{ quantity: 1 }, { quantity: 2 }] });
    await createUser({ email: 'two@example.com' });

    const response = await listUsers();

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([
      {
        id: expect.any(Number),
        email: 'one@example.com',
        orderCount: 2,
        orders: [
          { id: expect.any(Number), total: '9.99' },
          { id: expect.any(Number), total: '19.98' },
        ],
      },
      { id: expect.any(Number), email: 'two@example.com', orderCount: 0, orders: [] },
    ]);
  });

  it('uses the same, constant number of queries for 1 user and for 25 users', async () => {
    await createUser({ email: 'first@example.com', orders: [{ quantity: 1 }] });
    database.queries.length = 0;
    await listUsers();
    const queriesForOneUser = database.queries.length;

    for (let index = 0; index < 24; index++) {
      await createUser({ email: `user${index}@example.com`, orders: [{ quantity: 1 }, { quantity: 2 }] });
    }
    database.queries.length = 0;
    const response = await listUsers();

    expect(response.json()).toHaveLength(25);
    expect(queriesForOneUser).toBe(1);
    expect(database.queries).toHaveLength(queriesForOneUser);
  });

  it('requires the API key: 403 without, 403 with a wrong one', async () => {
    expect((await listUsers({})).statusCode).toBe(403);
    expect((await listUsers({ 'x-api-key': 'bad' })).statusCode).toBe(403);
  });
});
