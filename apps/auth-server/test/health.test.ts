import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/client.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/** Wraps a real database so a test can make it stop answering, and count the pings. */
function controllableDatabase(real: DatabaseHandle) {
  const state = { down: false, pings: 0 };
  const handle: DatabaseHandle = {
    ...real,
    async ping(timeoutMs) {
      state.pings++;
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return real.ping(timeoutMs);
    },
  };
  return { handle, state };
}

let database: TestDatabase;
let app: TestApp;
let close: () => Promise<void>;
let state: { down: boolean; pings: number };

beforeAll(async () => {
  database = await createTestDatabase();
  const controllable = controllableDatabase(database.handle);
  state = controllable.state;
  ({ app, close } = await startTestApp({ database: { ...database, handle: controllable.handle } }));
});
afterAll(async () => {
  await close();
  await database.drop();
});

describe('health', () => {
  it('live answers 200 {status:"ok"} without touching the database', async () => {
    state.down = true;
    const pingsBefore = state.pings;
    const response = await app.inject({ method: 'GET', url: '/health/live' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
    expect(state.pings).toBe(pingsBefore);
    // Every response names its request id, the one on the request's log lines.
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    state.down = false;
  });

  it('ready answers 200 when the database answers and 503 when it does not', async () => {
    const up = await app.inject({ method: 'GET', url: '/health/ready' });
    expect(up.statusCode).toBe(200);
    expect(up.json()).toEqual({ status: 'ok' });

    state.down = true;
    const down = await app.inject({ method: 'GET', url: '/health/ready' });
    expect(down.statusCode).toBe(503);
    state.down = false;
  });

  it('ready answers 503 while draining, live stays 200; every response then closes its connection', async () => {
    const before = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(before.headers.connection).not.toBe('close');
    app.beginDraining();
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
    const live = await app.inject({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);
    // Keep-alive clients reconnect through the load balancer to an instance that stays.
    const discovery = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(discovery.statusCode).toBe(200);
    expect(discovery.headers.connection).toBe('close');
    expect(live.headers.connection).toBe('close');
  });
});
