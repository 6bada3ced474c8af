import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/client.js';
import { DatabaseUnavailableError } from '../src/errors.js';
import { buildTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

let database: TestDatabase;
let app: FastifyInstance | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await app?.close();
  app = undefined;
});
afterAll(async () => {
  await database?.dispose();
});

/** The file's database, whose `select 1` can be made to fail after start-up. */
function databaseThatCanGoDown(): { handle: DatabaseHandle; goDown(): void } {
  let down = false;
  const handle: DatabaseHandle = {
    ...database.handle,
    ping: async (timeoutMs) => {
      if (down) throw new DatabaseUnavailableError('simulated outage');
      return database.handle.ping(timeoutMs);
    },
  };
  return {
    handle,
    goDown: () => {
      down = true;
    },
  };
}

describe('GET /health/live', () => {
  it('is 200 {status: "ok"} without an API key', async () => {
    app = await buildTestApp(database);

    const response = await app.inject({ method: 'GET', url: '/health/live' });

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('stays 200 while the database is down: it touches nothing external', async () => {
    const outage = databaseThatCanGoDown();
    app = await buildTestApp(database, { deps: { database: outage.handle } });
    outage.goDown();

    const response = await app.inject({ method: 'GET', url: '/health/live' });

    expect(response.statusCode).toBe(200);
  });
});

describe('GET /health/ready', () => {
  it('is 200 {status: "ok"} when select 1 answers', async () => {
    app = await buildTestApp(database);

    const response = await app.inject({ method: 'GET', url: '/health/ready' });

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('is 503 {statusCode, message} when the database does not answer', async () => {
    const outage = databaseThatCanGoDown();
    app = await buildTestApp(database, { deps: { database: outage.handle } });
    outage.goDown();

    const response = await app.inject({ method: 'GET', url: '/health/ready' });

    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ statusCode: 503, message: 'Database unavailable' });
  });

  it('is 503 while draining, while other routes are still served with Connection: close', async () => {
    app = await buildTestApp(database);
    app.lifecycle.startDraining();

    const ready = await app.inject({ method: 'GET', url: '/health/ready' });
    const live = await app.inject({ method: 'GET', url: '/health/live' });

    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ statusCode: 503, message: 'Shutting down' });
    expect(live.statusCode).toBe(200);
    expect(live.headers.connection).toBe('close');
  });

  it('turns 503 in preClose, for a close that did not start with a signal', async () => {
    const closingApp = await buildTestApp(database);
    await closingApp.close();

    expect(closingApp.lifecycle.draining).toBe(true);
  });
});
