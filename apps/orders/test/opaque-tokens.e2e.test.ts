import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { sessions } from '../src/db/schema.js';
import { deriveKey } from '../src/oidc/keys.js';
import { unsealTokens } from '../src/oidc/token-sealing.js';
import { testConfig, withApiKey } from './helpers/app.js';
import { type AuthServerProcess, startAuthServer } from './helpers/auth-server.js';
import { TestBrowser } from './helpers/browser.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { findFreePort } from './helpers/server-process.js';
import { signInThroughCallback } from './helpers/sign-in.js';

/**
 * `orders-api` registered with opaque access tokens at the real authorization server: the API
 * checks them through RFC 7662 introspection, authenticated as RESOURCE_ID / RESOURCE_SECRET, on
 * every request (no cache), so a revocation takes effect on the next call.
 */

const CLIENT_SECRET = randomBytes(24).toString('base64url');
const RESOURCE_SECRET = randomBytes(24).toString('base64url');
const SESSION_SECRET = randomBytes(32).toString('base64url');
const ALICE = { username: 'alice', password: randomBytes(12).toString('base64url') };

let auth: AuthServerProcess;
let database: TestDatabase;
let baseUrl: string;
let orders: FastifyInstance;
let environment: Record<string, string>;

beforeAll(async () => {
  const port = await findFreePort();
  baseUrl = `http://127.0.0.1:${port}`;
  auth = await startAuthServer({
    clients: [
      {
        client_id: 'orders-web',
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${baseUrl}/signin-oidc`],
        post_logout_redirect_uris: [`${baseUrl}/signed-out`],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile email offline_access orders.read orders.write',
        skip_consent: true,
      },
    ],
    resources: [
      {
        id: 'orders-api',
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'opaque',
        secret: RESOURCE_SECRET,
        claims: ['email'],
      },
    ],
    users: [{ sub: 'u-alice', ...ALICE, name: 'Alice Example', email: 'alice@example.com' }],
  });
  database = await createTestDatabase();
  environment = {
    PORT: String(port),
    BASE_URL: baseUrl,
    OIDC_ISSUER: auth.issuer,
    OIDC_CLIENT_ID: 'orders-web',
    OIDC_CLIENT_SECRET: CLIENT_SECRET,
    SESSION_SECRET,
    RESOURCE_ID: 'orders-api',
    RESOURCE_SECRET,
  };
  orders = await buildApp(testConfig(environment), { database: database.handle });
  await orders.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await orders?.close();
  await auth?.stop();
  await database?.dispose();
});

async function signedInAccessToken(browser: TestBrowser): Promise<string> {
  const { callback } = await signInThroughCallback(browser, { appUrl: baseUrl, user: ALICE });
  expect(callback.status).toBe(303);
  const [row] = await database.handle.db.select().from(sessions);
  const tokens = await unsealTokens(row!.tokens, deriveKey(SESSION_SECRET, 'session tokens'));
  return tokens.accessToken!;
}

describe('opaque access tokens', () => {
  it('the BFF works with them, the API accepts them directly, and a revocation is effective on the next call', async () => {
    const placed = await fetch(`${baseUrl}/orders`, {
      method: 'POST',
      headers: { ...withApiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', quantity: 2 }),
    });
    expect(placed.status).toBe(201);
    const browser = new TestBrowser();
    const accessToken = await signedInAccessToken(browser);
    expect(accessToken.split('.')).toHaveLength(1);

    const viaBff = await browser.request(`${baseUrl}/bff/orders`, { headers: { 'x-csrf': '1' } });
    const direct = await fetch(`${baseUrl}/orders`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(viaBff.status).toBe(200);
    expect(((await viaBff.json()) as unknown[]).length).toBe(1);
    expect(direct.status).toBe(200);

    // Logout revokes the refresh token, which ends the grant and its opaque access tokens.
    expect((await browser.request(`${baseUrl}/logout`)).status).toBe(302);
    const afterLogout = await fetch(`${baseUrl}/orders`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });

    expect(afterLogout.status).toBe(401);
    expect(afterLogout.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('with a wrong RESOURCE_SECRET the API cannot introspect: 503, not a verdict on the token', async () => {
    const browser = new TestBrowser();
    const accessToken = await signedInAccessToken(browser);
    const misconfigured = await buildApp(testConfig({ ...environment, RESOURCE_SECRET: 'not-the-secret' }), {
      database: database.handle,
    });
    try {
      const response = await misconfigured.inject({
        method: 'GET',
        url: '/orders',
        headers: { authorization: `Bearer ${accessToken}` },
      });

      expect(response.statusCode).toBe(503);
      expect(response.json().message).toMatch(/introspection/);
    } finally {
      await misconfigured.close();
    }
  });
});
