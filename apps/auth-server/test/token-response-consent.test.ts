import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { ORDERS_API, TEST_SECRETS } from './helpers/seed.js';

/**
 * Consent and the granted scope at the token endpoint: the claims a resource copies into its JWT
 * access tokens stay within the consented scopes, and the token response's `scope` lists every
 * granted scope (offline_access included with a refresh token) in the code and refresh responses
 * alike.
 */

let app: TestApp;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

const scopeSet = (scope: unknown) => new Set(String(scope).split(' '));

async function introspectAsOrdersApi(token: string) {
  const response = await app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi) },
    payload: form({ token }),
  });
  return response.json();
}

describe('claims in access tokens stay within consent', () => {
  it('openid orders.read: the orders API (claims: email) gets no e-mail', async () => {
    const tokens = await webClientTokens(app, 'openid orders.read');
    const claims = decodeJwt(String(tokens.access_token));
    expect(claims.aud).toBe(ORDERS_API);
    expect(claims).not.toHaveProperty('email');
    expect(await introspectAsOrdersApi(String(tokens.access_token))).not.toHaveProperty('email');
  });

  it('openid email orders.read: the e-mail travels, as consented', async () => {
    const tokens = await webClientTokens(app, 'openid email orders.read');
    expect(decodeJwt(String(tokens.access_token)).email).toBe('alice@example.test');
    expect(await introspectAsOrdersApi(String(tokens.access_token))).toMatchObject({
      email: 'alice@example.test',
    });
  });
});

describe('token response scope = the granted scopes', () => {
  it('code and refresh responses list every granted scope, offline_access included', async () => {
    const granted = 'openid profile email offline_access orders.read reports.read';
    const first = await webClientTokens(app, granted);
    expect(first.refresh_token).toEqual(expect.any(String));
    expect(scopeSet(first.scope)).toEqual(scopeSet(granted));
    const second = await refreshWithWebClient(app, String(first.refresh_token));
    expect(second.statusCode).toBe(200);
    expect(scopeSet(second.json().scope)).toEqual(scopeSet(granted));
  });

  it('oauth4webapi accepts the refresh response as it is (no "scope changed")', async () => {
    const first = await webClientTokens(app, 'openid offline_access orders.read');
    const refreshed = await refreshWithWebClient(app, String(first.refresh_token));
    // The client-side checks of a real library: a JSON token response with the granted scope.
    const response = new Response(refreshed.body, {
      status: refreshed.statusCode,
      headers: { 'content-type': 'application/json' },
    });
    const as = { issuer: 'https://issuer.example.test' } as oauth.AuthorizationServer;
    const client = { client_id: 'web' } as oauth.Client;
    const result = await oauth.processRefreshTokenResponse(as, client, response);
    expect(scopeSet(result.scope)).toEqual(scopeSet('openid offline_access orders.read'));
  });
});
