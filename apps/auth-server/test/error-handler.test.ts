import { invalidGrant } from '@oidc-orders/oauth-core';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandlerPlugin } from '../src/plugins/error-handler.js';
import { basicAuthorization, FORM, form, startTestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { webClientTokens } from './helpers/flows.js';
import { TEST_SECRETS } from './helpers/seed.js';

/** A bare Fastify with only the error handler, and routes that fail in each way it maps. */
async function appWithFailingRoutes() {
  const app = Fastify({ logger: false });
  await app.register(errorHandlerPlugin);
  app.get('/oauth-error', async () => {
    throw invalidGrant('the private reason');
  });
  app.get('/bug', async () => {
    throw new Error('secret internal detail');
  });
  app.get('/database-down', async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  app.get('/database-shutdown', async () => {
    throw new Error('Failed query', {
      cause: Object.assign(new Error('terminating connection'), { code: '57P01' }),
    });
  });
  app.post(
    '/validated',
    { schema: { body: { type: 'object', required: ['x'], properties: { x: { type: 'integer' } } } } },
    async () => ({ ok: true }),
  );
  app.get('/bearer', { config: { errorStyle: 'bearer' } }, async () => {
    throw invalidGrant('bearer route');
  });
  return app;
}

describe('error handler', () => {
  let app: Awaited<ReturnType<typeof appWithFailingRoutes>>;
  beforeAll(async () => {
    app = await appWithFailingRoutes();
  });
  afterAll(() => app.close());

  it('writes an OAuthError as RFC 6749 §5.2 JSON without its private detail', async () => {
    const response = await app.inject({ method: 'GET', url: '/oauth-error' });
    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json()).sort()).toEqual(['error', 'error_description']);
    expect(response.json().error).toBe('invalid_grant');
    expect(response.body).not.toContain('private reason');
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('answers anything unexpected with 500 server_error and no details', async () => {
    const response = await app.inject({ method: 'GET', url: '/bug' });
    expect(response.statusCode).toBe(500);
    expect(response.json().error).toBe('server_error');
    expect(response.body).not.toContain('secret internal detail');
  });

  it.each(['/database-down', '/database-shutdown'])(
    'answers %s with 503 temporarily_unavailable',
    async (url) => {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toBe('temporarily_unavailable');
      expect(response.headers['retry-after']).toBe('1');
    },
  );

  it('answers schema validation and body parsing errors with 400 invalid_request', async () => {
    const invalid = await app.inject({ method: 'POST', url: '/validated', payload: { x: 'nope' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toBe('invalid_request');
    const unparsable = await app.inject({
      method: 'POST',
      url: '/validated',
      headers: { 'content-type': 'application/json' },
      payload: '{"x":',
    });
    expect(unparsable.statusCode).toBe(400);
    expect(unparsable.json().error).toBe('invalid_request');
  });

  it('adds a Bearer challenge on bearer routes', async () => {
    const response = await app.inject({ method: 'GET', url: '/bearer' });
    expect(response.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_grant"/);
  });
});

describe('database outage at the token endpoint', () => {
  it('answers 503 temporarily_unavailable, and readiness reports it', async () => {
    const database = await createTestDatabase();
    const { app } = await startTestApp({ database });
    try {
      const { refresh_token: refreshToken } = await webClientTokens(app);
      await database.handle.close();
      const response = await app.inject({
        method: 'POST',
        url: '/token',
        headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
        payload: form({ grant_type: 'refresh_token', refresh_token: String(refreshToken) }),
      });
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toBe('temporarily_unavailable');
      expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
