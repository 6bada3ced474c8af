import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { databaseKind } from './helpers/database.js';
import { issueCode, pkcePair, refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { ORDERS_API, SPA_REDIRECT_URI, TEST_SECRETS } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

function introspectAsOrdersApi(token: string) {
  return app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi) },
    payload: form({ token }),
  });
}

describe('authorization_code → refresh_token', () => {
  it('redeems a code for access, refresh and ID tokens, with no-store headers', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await issueCode(app, {
      clientId: 'spa',
      redirectUri: SPA_REDIRECT_URI,
      scope: 'openid offline_access orders.read',
      challenge,
    });
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: FORM,
      payload: form({
        grant_type: 'authorization_code',
        client_id: 'spa',
        code,
        redirect_uri: SPA_REDIRECT_URI,
        code_verifier: verifier,
      }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(Object.keys(response.json()).sort()).toEqual(
      ['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'].sort(),
    );

    // RFC 6749 §4.1.2: the code is single-use.
    const again = await app.inject({
      method: 'POST',
      url: '/token',
      headers: FORM,
      payload: form({
        grant_type: 'authorization_code',
        client_id: 'spa',
        code,
        redirect_uri: SPA_REDIRECT_URI,
        code_verifier: verifier,
      }),
    });
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toBe('invalid_grant');
  });

  it('rotates the refresh token on every use', async () => {
    const first = await webClientTokens(app);
    const rotated = await refreshWithWebClient(app, String(first.refresh_token));
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const body = rotated.json();
    expect(body.refresh_token).toEqual(expect.any(String));
    expect(body.refresh_token).not.toBe(first.refresh_token);
    expect(body.access_token).not.toBe(first.access_token);
  });

  it('treats reuse of a rotated refresh token as theft and revokes the whole chain', async () => {
    const first = await webClientTokens(app);
    const second = (await refreshWithWebClient(app, String(first.refresh_token))).json();
    const third = (await refreshWithWebClient(app, second.refresh_token)).json();
    expect((await introspectAsOrdersApi(third.access_token)).json().active).toBe(true);

    // RFC 9700 §4.14.2: the first token comes back after rotation.
    const reuse = await refreshWithWebClient(app, String(first.refresh_token));
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json().error).toBe('invalid_grant');

    // Every token of the grant is now dead: the latest refresh token and the latest access token.
    const latest = await refreshWithWebClient(app, third.refresh_token);
    expect(latest.statusCode).toBe(400);
    expect(latest.json().error).toBe('invalid_grant');
    expect((await introspectAsOrdersApi(third.access_token)).json()).toEqual({ active: false });
  });

  it(`lets exactly one of ten parallel refreshes with one token succeed (${databaseKind})`, async () => {
    const { refresh_token: refreshToken } = await webClientTokens(app);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => refreshWithWebClient(app, String(refreshToken))),
    );
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(9);
    for (const response of responses.filter((r) => r.statusCode === 400)) {
      expect(response.json().error).toBe('invalid_grant');
    }
  });

  it("refuses another client's refresh token", async () => {
    const { refresh_token: refreshToken } = await webClientTokens(app);
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: FORM,
      payload: form({ grant_type: 'refresh_token', client_id: 'spa', refresh_token: String(refreshToken) }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_grant');
  });
});
