import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configPlugin } from '../src/plugins/config.js';
import { errorHandlerPlugin } from '../src/plugins/error-handler.js';
import { guardedRoutes } from '../src/routes/guarded-areas.js';
import { buildTestApp, TEST_API_KEY, testConfig, withApiKey } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.dispose();
});

function captureLogs(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('plugin wiring', () => {
  it('a route plugin registered without its dependencies fails ready(), not the first request', async () => {
    const app = Fastify();
    app.register(errorHandlerPlugin);
    app.register(configPlugin, { config: testConfig() });
    app.register(guardedRoutes);

    await expect(app.ready()).rejects.toThrow(/db|api-key-guard/);
    await app.close();
  });

  it('unknown routes answer 404 {statusCode, message}', async () => {
    const app = await buildTestApp(database);
    try {
      const response = await app.inject({ method: 'GET', url: '/nowhere' });

      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ statusCode: 404, message: expect.any(String) });
    } finally {
      await app.close();
    }
  });

  it('an unexpected error is a generic 500; the details go to the log only', async () => {
    const logs = captureLogs();
    const brokenDatabase = {
      ...database.handle,
      db: new Proxy(database.handle.db, {
        get(target, property, receiver) {
          if (property === 'query') throw new Error('relational query exploded: secret-detail');
          return Reflect.get(target, property, receiver);
        },
      }),
    };
    const app = await buildTestApp(database, {
      environment: { LOG_LEVEL: 'info' },
      deps: { database: brokenDatabase, logStream: logs.stream },
    });
    try {
      const response = await app.inject({ method: 'GET', url: '/users', headers: withApiKey });

      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ statusCode: 500, message: 'Internal Server Error' });
      expect(response.body).not.toContain('secret-detail');
      expect(JSON.stringify(logs.lines())).toContain('secret-detail');
    } finally {
      await app.close();
    }
  });
});

describe('logging', () => {
  it('logs no request header and no query value, at trace too', async () => {
    const logs = captureLogs();
    const app = await buildTestApp(database, {
      environment: { LOG_LEVEL: 'trace' },
      deps: { logStream: logs.stream },
    });
    try {
      await app.inject({
        method: 'GET',
        url: '/health/live?id_token_hint=hint-value-1&client_secret=secret-value-2&code=code-value-3&returnUrl=/app',
        headers: {
          ...withApiKey,
          authorization: 'Bearer token-value-123',
          cookie: 'session=cookie-value-456',
          'set-cookie': 'echo=set-cookie-value-789',
          dpop: 'proof-value-000',
          'user-agent': 'redaction-test',
        },
      });

      const output = JSON.stringify(logs.lines());
      for (const secret of [
        TEST_API_KEY,
        'token-value-123',
        'cookie-value-456',
        'set-cookie-value-789',
        'proof-value-000',
        'hint-value-1',
        'secret-value-2',
        'code-value-3',
      ]) {
        expect(output).not.toContain(secret);
      }
      const incoming = logs.lines().find((line) => line.msg === 'incoming request') as {
        req: Record<string, unknown>;
      };
      expect(incoming.req).not.toHaveProperty('headers');
      expect(incoming.req.url).toBe(
        '/health/live?id_token_hint=[Redacted]&client_secret=[Redacted]&code=[Redacted]&returnUrl=/app',
      );
    } finally {
      await app.close();
    }
  });

  it('gives every request an id, logged as reqId and returned as x-request-id', async () => {
    const logs = captureLogs();
    const app = await buildTestApp(database, {
      environment: { LOG_LEVEL: 'info' },
      deps: { logStream: logs.stream },
    });
    try {
      const first = await app.inject({ method: 'GET', url: '/health/live' });
      const second = await app.inject({ method: 'GET', url: '/health/live' });

      const requestId = first.headers['x-request-id'];
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(second.headers['x-request-id']).not.toBe(requestId);
      expect(
        logs
          .lines()
          .filter((line) => line.reqId === requestId)
          .map((line) => line.msg),
      ).toEqual(['incoming request', 'request completed']);
    } finally {
      await app.close();
    }
  });
});
