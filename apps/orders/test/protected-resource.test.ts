import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import {
  accessTokenClaims,
  FAKE_CLIENT_ID,
  FAKE_CLIENT_SECRET,
  type FakeIssuer,
  startFakeIssuer,
} from './helpers/fake-issuer.js';

/**
 * RFC 9728 protected resource metadata, and its URL on every refusal of an access token (§5.1),
 * beside the RFC 6750 §3 error and scope.
 */

const RESOURCE = 'http://orders.test/api';
const METADATA_URL = 'http://orders.test/.well-known/oauth-protected-resource/api';

let database: TestDatabase;
let issuer: FakeIssuer;
let app: FastifyInstance;
let plainApp: FastifyInstance;

function environment(resourceId: string): Record<string, string> {
  return {
    OIDC_ISSUER: issuer.issuer,
    OIDC_CLIENT_ID: FAKE_CLIENT_ID,
    OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
    SESSION_SECRET: 'protected-resource-test-session-secret-0123',
    RESOURCE_ID: resourceId,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  issuer = await startFakeIssuer();
  app = await buildTestApp(database, { environment: environment(RESOURCE) });
  plainApp = await buildTestApp(database, { environment: environment('orders-api') });
});
afterAll(async () => {
  await app?.close();
  await plainApp?.close();
  await issuer?.close();
  await database?.dispose();
});

const challengeOf = (response: { headers: Record<string, unknown> }) =>
  String(response.headers['www-authenticate'] ?? '');

describe('GET /.well-known/oauth-protected-resource (RFC 9728 §3)', () => {
  it.each([
    ['the path RFC 9728 §3.1 derives from RESOURCE_ID', '/.well-known/oauth-protected-resource/api'],
    ['the bare well-known path', '/.well-known/oauth-protected-resource'],
  ])('is served at %s, naming the resource, its issuer and its scopes', async (_label, url) => {
    const response = await app.inject({ method: 'GET', url });

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      resource: RESOURCE,
      authorization_servers: [issuer.issuer],
      scopes_supported: ['orders.read', 'orders.write', 'email'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: expect.arrayContaining(['ES256']),
    });
  });

  it('is not published when RESOURCE_ID is not an http(s) URL', async () => {
    const response = await plainApp.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' });

    expect(response.statusCode).toBe(404);
  });
});

describe('WWW-Authenticate on the bearer API names the metadata (RFC 9728 §5.1)', () => {
  it('without credentials: 401, no error, resource_metadata on both challenges', async () => {
    const response = await app.inject({ method: 'GET', url: '/orders' });

    expect(response.statusCode).toBe(401);
    const challenge = challengeOf(response);
    expect(challenge).toMatch(
      new RegExp(`^Bearer realm="${RESOURCE}", resource_metadata="${METADATA_URL}", DPoP `),
    );
    expect(challenge).toContain(`DPoP realm="${RESOURCE}", resource_metadata="${METADATA_URL}"`);
    expect(challenge).not.toContain('error=');
  });

  it('a token for another audience: 401 invalid_token with resource_metadata', async () => {
    const token = await issuer.sign(accessTokenClaims(issuer.issuer, { aud: 'orders-api' }), {
      typ: 'at+jwt',
    });

    const response = await app.inject({
      method: 'GET',
      url: '/orders',
      headers: { authorization: `Bearer ${token}` },
    });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(
      new RegExp(`^Bearer realm="${RESOURCE}", resource_metadata="${METADATA_URL}", error="invalid_token"`),
    );
  });

  it('a token without orders.read: 403 insufficient_scope naming the scope, with resource_metadata', async () => {
    const claims = accessTokenClaims(issuer.issuer, { aud: RESOURCE, scope: 'openid' });
    const token = await issuer.sign(claims, { typ: 'at+jwt' });

    const response = await app.inject({
      method: 'GET',
      url: '/orders',
      headers: { authorization: `Bearer ${token}` },
    });

    expect(response.statusCode).toBe(403);
    const challenge = challengeOf(response);
    expect(challenge).toContain(`resource_metadata="${METADATA_URL}", error="insufficient_scope"`);
    expect(challenge).toContain('scope="orders.read"');
  });

  it('a token without an email claim: 401 invalid_token with resource_metadata', async () => {
    const claims = accessTokenClaims(issuer.issuer, { aud: RESOURCE, email: undefined });
    const token = await issuer.sign(claims, { typ: 'at+jwt' });

    const response = await app.inject({
      method: 'GET',
      url: '/orders',
      headers: { authorization: `Bearer ${token}` },
    });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain(`resource_metadata="${METADATA_URL}", error="invalid_token"`);
  });

  it('names no metadata when none is published', async () => {
    const response = await plainApp.inject({ method: 'GET', url: '/orders' });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).not.toContain('resource_metadata');
  });
});
