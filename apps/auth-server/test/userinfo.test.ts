import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { webClientTokens } from './helpers/flows.js';
import { TEST_SECRETS } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;
let accessToken: string;

beforeAll(async () => {
  ({ app, close } = await startTestApp());
  accessToken = String((await webClientTokens(app, 'openid profile email orders.read')).access_token);
});
afterAll(() => close());

describe('/userinfo', () => {
  it('answers GET with a bearer header', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toEqual({
      sub: 'u-alice',
      name: 'Alice Example',
      email: 'alice@example.test',
      email_verified: true,
    });
  });

  it('answers POST with the token in the header or in the form body (RFC 6750 §2.2)', async () => {
    const header = await app.inject({
      method: 'POST',
      url: '/userinfo',
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(header.statusCode).toBe(200);
    const body = await app.inject({
      method: 'POST',
      url: '/userinfo',
      headers: FORM,
      payload: form({ access_token: accessToken }),
    });
    expect(body.statusCode).toBe(200);
    expect(body.json().sub).toBe('u-alice');
  });

  it('answers a missing token with 401 and a bare Bearer challenge (RFC 6750 §3.1)', async () => {
    const response = await app.inject({ method: 'GET', url: '/userinfo' });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(response.headers['www-authenticate']).not.toContain('error=');
  });

  it('answers an invalid token with 401 invalid_token in WWW-Authenticate', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toBe('invalid_token');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it('answers a token without openid with 403 insufficient_scope', async () => {
    const serviceToken = (
      await app.inject({
        method: 'POST',
        url: '/token',
        headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
        payload: form({ grant_type: 'client_credentials', scope: 'orders.read' }),
      })
    ).json().access_token;
    const response = await app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: `Bearer ${serviceToken}` },
    });
    expect(response.statusCode).toBe(403);
    expect(response.headers['www-authenticate']).toMatch(/error="insufficient_scope"/);
  });

  it('refuses the token in two places at once with 400 invalid_request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/userinfo',
      headers: { ...FORM, authorization: `Bearer ${accessToken}` },
      payload: form({ access_token: accessToken }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.headers['www-authenticate']).toMatch(/error="invalid_request"/);
  });

  it('does not take the token from the query string', async () => {
    const response = await app.inject({ method: 'GET', url: `/userinfo?access_token=${accessToken}` });
    expect(response.statusCode).toBe(401);
  });

  it('refuses a JSON body on POST', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/userinfo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ access_token: accessToken }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_request');
  });
});
