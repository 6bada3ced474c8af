import { ACR_VALUES } from '@oidc-orders/oauth-core';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { webClientTokens } from './helpers/flows.js';
import { ORDERS_API, REPORTS_API, TEST_SECRETS, testSeed } from './helpers/seed.js';

/** RFC 8693 at POST /token, with the per-client policy from the seed. */

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const GATEWAY_SECRET = 'gateway-secret-for-tests-0123456789';
/** A resource whose tokens need a multi-factor sign-in (seed `require_mfa`). */
const PAYROLL_API = 'https://api.example.test/payroll';

function exchangeSeed(): SeedDocument {
  const seed = testSeed();
  seed.resources = [
    ...(seed.resources ?? []),
    { id: PAYROLL_API, scopes: ['payroll.read'], access_token_format: 'jwt', require_mfa: true },
  ];
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: 'gateway',
      client_secret: GATEWAY_SECRET,
      grant_types: [EXCHANGE],
      token_exchange: {
        audiences: [ORDERS_API, REPORTS_API, PAYROLL_API],
        scopes: ['openid', 'orders.read', 'reports.read'],
      },
    },
  ];
  return seed;
}

let app: TestApp;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ app, close } = await startTestApp({ seed: exchangeSeed() }));
});
afterAll(() => close());

const gateway = basicAuthorization('gateway', GATEWAY_SECRET);

function exchange(params: Record<string, string | string[]>, authorization = gateway) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization },
    payload: form({ grant_type: EXCHANGE, ...params }),
  });
}

/** The web client's user access token for orders-api: `openid profile email orders.read`. */
async function userAccessToken(): Promise<string> {
  return String((await webClientTokens(app, 'openid profile email orders.read')).access_token);
}

async function serviceToken(): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
    payload: form({ grant_type: 'client_credentials', scope: 'orders.read' }),
  });
  return response.json().access_token;
}

describe('token exchange: allowed', () => {
  it('exchanges a user token for one the gateway may use at the API, verifiable through the JWKS', async () => {
    const response = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      audience: ORDERS_API,
      scope: 'orders.read',
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json();
    expect(body).toMatchObject({
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      scope: 'orders.read',
    });
    expect(body).not.toHaveProperty('refresh_token');
    const jwks = (await app.inject({ method: 'GET', url: '/jwks' })).json();
    const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
      issuer: TEST_ISSUER,
      audience: ORDERS_API,
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ sub: 'u-alice', client_id: 'gateway', scope: 'orders.read' });
  });

  it('records the actor in act, reported by introspection of an opaque token', async () => {
    const response = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      actor_token: await serviceToken(),
      actor_token_type: ACCESS_TOKEN,
      resource: REPORTS_API,
    });
    expect(response.statusCode).toBe(200);
    // reports-api tokens are opaque; the subject token carried no reports scope, so only openid travels.
    expect(response.json().scope).toBe('openid');
    const introspection = await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi) },
      payload: form({ token: response.json().access_token }),
    });
    expect(introspection.json()).toMatchObject({
      active: true,
      sub: 'u-alice',
      client_id: 'gateway',
      aud: REPORTS_API,
      act: { sub: 'service' },
    });
  });

  it('lets audience repeat with the same value', async () => {
    const response = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      audience: [ORDERS_API, ORDERS_API],
    });
    expect(decodeJwt(response.json().access_token).aud).toBe(ORDERS_API);
  });
});

describe('token exchange: denied', () => {
  it('refuses an audience the policy does not list with invalid_target', async () => {
    const response = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      audience: 'https://api.example.test/billing',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_target');
  });

  it('refuses two different audiences with invalid_target', async () => {
    const response = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      audience: [ORDERS_API, REPORTS_API],
    });
    expect(response.json().error).toBe('invalid_target');
  });

  it('never grants more scope than the subject token had (invalid_scope)', async () => {
    const response = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      scope: 'reports.read',
    });
    expect(response.json().error).toBe('invalid_scope');
  });

  it('answers a bad subject token, or an ID token the policy does not accept, with invalid_request', async () => {
    const cases: Array<Record<string, string>> = [
      { subject_token: 'garbage', subject_token_type: ACCESS_TOKEN },
      {
        subject_token: String((await webClientTokens(app, 'openid')).id_token),
        subject_token_type: ID_TOKEN,
      },
      { subject_token: await userAccessToken() },
    ];
    for (const params of cases) {
      const response = await exchange(params);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_request');
    }
  });

  it('refuses a require_mfa resource to a password-only subject token with invalid_target; multi-factor passes', async () => {
    const password = await exchange({
      subject_token: await userAccessToken(),
      subject_token_type: ACCESS_TOKEN,
      audience: PAYROLL_API,
    });
    expect(password.statusCode).toBe(400);
    expect(password.headers['cache-control']).toBe('no-store');
    expect(password.json()).toMatchObject({ error: 'invalid_target', error_description: expect.any(String) });

    const mfaTokens = await webClientTokens(app, 'openid orders.read', {
      acr: ACR_VALUES.mfa,
      amr: ['pwd', 'otp', 'mfa'],
    });
    const mfa = await exchange({
      subject_token: String(mfaTokens.access_token),
      subject_token_type: ACCESS_TOKEN,
      audience: PAYROLL_API,
    });
    expect(mfa.statusCode).toBe(200);
    expect(decodeJwt(mfa.json().access_token)).toMatchObject({ aud: PAYROLL_API, sub: 'u-alice' });
  });

  it('is not open to clients without the grant', async () => {
    const response = await exchange(
      { subject_token: await userAccessToken(), subject_token_type: ACCESS_TOKEN },
      basicAuthorization('web', TEST_SECRETS.web),
    );
    expect(response.json().error).toBe('unauthorized_client');
  });
});

describe('discovery', () => {
  it('lists the token exchange grant type', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(metadata.grant_types_supported).toContain(EXCHANGE);
  });
});
