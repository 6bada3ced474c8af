import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { ORDERS_API, REPORTS_API, TEST_SECRETS } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

const ordersApi = basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi);
const reportsApi = basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi);
const web = basicAuthorization('web', TEST_SECRETS.web);
const service = basicAuthorization('service', TEST_SECRETS.service);

function introspect(token: string, authorization?: string, extra: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, ...(authorization ? { authorization } : {}) },
    payload: form({ token, ...extra }),
  });
}

function revoke(token: string, authorization?: string, extra: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/revoke',
    headers: { ...FORM, ...(authorization ? { authorization } : {}) },
    payload: form({ token, ...extra }),
  });
}

async function serviceToken(scope: string): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: service },
    payload: form({ grant_type: 'client_credentials', scope }),
  });
  return response.json().access_token;
}

describe('POST /introspect', () => {
  it('reports an active JWT access token to the resource it is addressed to', async () => {
    const token = await serviceToken('orders.read');
    const response = await introspect(token, ordersApi);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toMatchObject({
      active: true,
      client_id: 'service',
      sub: 'service',
      scope: 'orders.read',
      aud: ORDERS_API,
      token_type: 'Bearer',
    });
    expect(response.json().exp).toEqual(expect.any(Number));
  });

  it('reports a user token with the claims copied for the resource', async () => {
    const tokens = await webClientTokens(app);
    const response = await introspect(String(tokens.access_token), ordersApi);
    expect(response.json()).toMatchObject({
      active: true,
      sub: 'u-alice',
      client_id: 'web',
      email: 'alice@example.test',
    });
  });

  it('answers {active:false} for a token addressed to another resource', async () => {
    const token = await serviceToken('orders.read');
    expect((await introspect(token, reportsApi)).json()).toEqual({ active: false });
  });

  it('answers {active:false} for unknown, garbage and empty-looking tokens', async () => {
    for (const token of ['unknown-token', 'a.b.c', 'eyJhbGciOiJub25lIn0.e30.', 'x'.repeat(5000)]) {
      const response = await introspect(token, ordersApi);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ active: false });
    }
  });

  it('lets a confidential client introspect its own tokens, including refresh tokens', async () => {
    const tokens = await webClientTokens(app);
    expect((await introspect(String(tokens.refresh_token), web)).json()).toMatchObject({
      active: true,
      client_id: 'web',
    });
    expect((await introspect(String(tokens.access_token), web)).json()).toMatchObject({ active: true });
    // Not another client's.
    expect((await introspect(String(tokens.refresh_token), service)).json()).toEqual({ active: false });
  });

  it('rejects unauthenticated callers with 401 invalid_client', async () => {
    const token = await serviceToken('orders.read');
    const none = await introspect(token);
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toBe('invalid_client');
    expect(none.headers['www-authenticate']).toMatch(/^Basic /);

    const wrong = await introspect(token, basicAuthorization(ORDERS_API, 'not-the-secret'));
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('invalid_client');

    // A public client identifies itself but cannot prove anything: not enough (RFC 7662 §2.1).
    const publicClient = await introspect(token, undefined, { client_id: 'spa' });
    expect(publicClient.statusCode).toBe(401);
    expect(publicClient.json().error).toBe('invalid_client');
  });

  it('requires the token parameter and a form body', async () => {
    const missing = await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: ordersApi },
      payload: '',
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toBe('invalid_request');
    const json = await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { 'content-type': 'application/json', authorization: ordersApi },
      payload: '{"token":"x"}',
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toBe('invalid_request');
  });
});

describe('POST /revoke', () => {
  it('revokes an opaque access token', async () => {
    const token = await serviceToken('reports.read');
    expect((await introspect(token, reportsApi)).json().active).toBe(true);
    const response = await revoke(token, service);
    expect(response.statusCode).toBe(200);
    // A JSON body, so JSON client libraries that parse every answer carry on.
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({});
    expect((await introspect(token, reportsApi)).json()).toEqual({ active: false });
  });

  it('revokes a JWT access token (jti denylist)', async () => {
    const token = await serviceToken('orders.read');
    expect((await revoke(token, service, { token_type_hint: 'access_token' })).statusCode).toBe(200);
    expect((await introspect(token, ordersApi)).json()).toEqual({ active: false });
  });

  it('revoking a refresh token ends its grant', async () => {
    const tokens = await webClientTokens(app);
    expect(
      (await revoke(String(tokens.refresh_token), web, { token_type_hint: 'refresh_token' })).statusCode,
    ).toBe(200);
    const refresh = await refreshWithWebClient(app, String(tokens.refresh_token));
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    expect((await introspect(String(tokens.access_token), ordersApi)).json()).toEqual({ active: false });
  });

  it("answers 200 for unknown tokens and leaves another client's tokens alone", async () => {
    expect((await revoke('never-issued', service)).statusCode).toBe(200);
    const tokens = await webClientTokens(app);
    expect((await revoke(String(tokens.refresh_token), service)).statusCode).toBe(200);
    expect((await refreshWithWebClient(app, String(tokens.refresh_token))).statusCode).toBe(200);
  });

  it('lets a public client revoke with its client_id', async () => {
    const response = await revoke('whatever', undefined, { client_id: 'spa' });
    expect(response.statusCode).toBe(200);
  });

  it('requires client authentication', async () => {
    const token = await serviceToken('reports.read');
    const none = await revoke(token);
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toBe('invalid_client');
    const wrong = await revoke(token, basicAuthorization('service', 'wrong'));
    expect(wrong.statusCode).toBe(401);
    expect((await introspect(token, reportsApi)).json().active).toBe(true);
  });
});
