import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, withApiKey } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import {
  accessTokenClaims,
  FAKE_CLIENT_ID,
  FAKE_CLIENT_SECRET,
  type FakeIssuer,
  startFakeIssuer,
} from './helpers/fake-issuer.js';

/**
 * `POST /mcp` with JSON-RPC messages as an MCP client sends them (the official SDK's client against
 * the real auth server is in mcp-client.test.ts): the token's audience, the scope of each tool,
 * DPoP-bound tokens, and tools acting for the token's user only.
 */

const BASE_URL = 'http://orders.test';
const RESOURCE = `${BASE_URL}/`;
const METADATA_URL = `${BASE_URL}/.well-known/oauth-protected-resource`;

let database: TestDatabase;
let issuer: FakeIssuer;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  issuer = await startFakeIssuer();
  app = await buildTestApp(database, {
    environment: {
      OIDC_ISSUER: issuer.issuer,
      OIDC_CLIENT_ID: FAKE_CLIENT_ID,
      OIDC_CLIENT_SECRET: FAKE_CLIENT_SECRET,
      SESSION_SECRET: 'mcp-test-session-secret-0123456789abcdef',
      RESOURCE_ID: RESOURCE,
      BASE_URL,
    },
  });
});
afterAll(async () => {
  await app?.close();
  await issuer?.close();
  await database?.dispose();
});
beforeEach(async () => {
  await database.reset();
});

const token = (overrides: JWTPayload = {}) =>
  issuer.sign(accessTokenClaims(issuer.issuer, { aud: RESOURCE, ...overrides }), { typ: 'at+jwt' });

let nextId = 1;
function rpc(method: string, params: Record<string, unknown>, headers: Record<string, string>) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...headers,
    },
    payload: { jsonrpc: '2.0', id: nextId++, method, params },
  });
}

const callTool = (name: string, args: Record<string, unknown>, headers: Record<string, string>) =>
  rpc('tools/call', { name, arguments: args }, headers);

const challengeOf = (response: { headers: Record<string, unknown> }) =>
  String(response.headers['www-authenticate'] ?? '');

async function placeOrderWithApiKey(email: string, quantity: number): Promise<number> {
  const response = await app.inject({
    method: 'POST',
    url: '/orders',
    headers: withApiKey,
    payload: { email, quantity },
  });
  return response.json().id;
}

describe('POST /mcp: who may call', () => {
  it('without a token: 401 naming the protected resource metadata', async () => {
    const response = await rpc('tools/list', {}, {});

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain(`resource_metadata="${METADATA_URL}"`);
  });

  it('a token for another audience is refused (401 invalid_token), never passed on', async () => {
    const foreign = await token({ aud: 'https://billing.example/' });

    const response = await callTool('list_orders', {}, { authorization: `Bearer ${foreign}` });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toContain('error="invalid_token"');
    expect(challengeOf(response)).toContain(`resource_metadata="${METADATA_URL}"`);
  });

  it('initialize and tools/list need only a token for this resource', async () => {
    const authorization = `Bearer ${await token({ scope: 'openid' })}`;

    const initialized = await rpc(
      'initialize',
      { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
      { authorization },
    );
    const listed = await rpc('tools/list', {}, { authorization });

    expect(initialized.statusCode).toBe(200);
    expect(initialized.json().result.serverInfo.name).toBe('orders');
    expect(listed.statusCode).toBe(200);
    expect(
      listed
        .json()
        .result.tools.map((tool: { name: string }) => tool.name)
        .sort(),
    ).toEqual(['list_orders', 'place_order']);
  });
});

describe('POST /mcp: scopes per tool (403 insufficient_scope naming the scope)', () => {
  it.each([
    ['list_orders', 'orders.write', 'orders.read', {}],
    ['place_order', 'orders.read', 'orders.write', { quantity: 1 }],
  ])('%s with only %s is refused for want of %s', async (tool, granted, needed, args) => {
    const authorization = `Bearer ${await token({ scope: `openid ${granted}` })}`;

    const response = await callTool(tool, args, { authorization });

    expect(response.statusCode).toBe(403);
    const challenge = challengeOf(response);
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain(`scope="${needed}"`);
    expect(challenge).toContain(`resource_metadata="${METADATA_URL}"`);
  });
});

describe('POST /mcp: the tools act for the token’s user', () => {
  it("list_orders answers the caller's orders only", async () => {
    const own = await placeOrderWithApiKey('alice@example.com', 2);
    await placeOrderWithApiKey('bob@example.com', 5);
    const authorization = `Bearer ${await token({ scope: 'orders.read' })}`;

    const response = await callTool('list_orders', {}, { authorization });

    expect(response.statusCode).toBe(200);
    const { structuredContent } = response.json().result;
    expect(structuredContent.orders.map((order: { id: number }) => order.id)).toEqual([own]);
  });

  it('place_order stores an order for the e-mail of the token, whatever the arguments say', async () => {
    const authorization = `Bearer ${await token({ scope: 'orders.write' })}`;

    const response = await callTool(
      'place_order',
      { quantity: 3, email: 'bob@example.com' },
      { authorization },
    );

    expect(response.statusCode).toBe(200);
    const { order } = response.json().result.structuredContent;
    expect(order).toMatchObject({ email: 'alice@example.com', quantity: 3, status: 'created' });
    const stored = await app.inject({ method: 'GET', url: `/orders/${order.id}`, headers: withApiKey });
    expect(stored.json().email).toBe('alice@example.com');
  });

  it('place_order refuses a quantity below 1 as a tool error, storing nothing', async () => {
    const authorization = `Bearer ${await token({ scope: 'orders.write orders.read' })}`;

    const response = await callTool('place_order', { quantity: 0 }, { authorization });
    const listed = await callTool('list_orders', {}, { authorization });

    expect(response.json().result.isError).toBe(true);
    expect(listed.json().result.structuredContent.orders).toEqual([]);
  });
});

describe('POST /mcp with a DPoP-bound token (RFC 9449 §7)', () => {
  async function boundCall() {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    const bound = await token({ scope: 'orders.read', cnf: { jkt: await calculateJwkThumbprint(jwk) } });
    const proof = await new SignJWT({
      jti: randomBytes(12).toString('base64url'),
      htm: 'POST',
      htu: `${BASE_URL}/mcp`,
      iat: Math.floor(Date.now() / 1000),
      ath: createHash('sha256').update(bound).digest('base64url'),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .sign(privateKey);
    return { bound, proof };
  }

  it('is accepted with its proof', async () => {
    const { bound, proof } = await boundCall();

    const response = await callTool('list_orders', {}, { authorization: `DPoP ${bound}`, dpop: proof });

    expect(response.statusCode).toBe(200);
    expect(response.json().result.structuredContent.orders).toEqual([]);
  });

  it('is refused as a bearer token (401 invalid_token on the DPoP challenge)', async () => {
    const { bound } = await boundCall();

    const response = await callTool('list_orders', {}, { authorization: `Bearer ${bound}` });

    expect(response.statusCode).toBe(401);
    expect(challengeOf(response)).toMatch(
      /^DPoP realm="[^"]*", resource_metadata="[^"]*", error="invalid_token"/,
    );
  });
});
