import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedClient } from '../src/schemas/seed.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { assertionParams, type ClientKey, clientKey } from './helpers/client-keys.js';
import { pkcePair } from './helpers/flows.js';
import { ORDERS_API, TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * For every endpoint that authenticates clients (or resources), every method discovery advertises
 * works, and methods it does not advertise are refused. Lenient where real clients are wrong:
 * secrets sent in Basic without form-encoding, and the JSON body of /revoke.
 */

const REDIRECT_URI = 'https://methods.example.test/cb';
const SECRET = 'methods-secret-for-tests-0123456789';
/** What Python's Authlib and requests-oauthlib send raw in Basic: `+`, `%`, `:` and a space. */
const AWKWARD_SECRET = 'a+b%2Fc: d%e-for-tests-0123456789';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let app: TestApp;
let close: () => Promise<void>;
let key: ClientKey;
let metadata: Record<string, unknown>;

function methodClient(clientId: string, extra: Partial<SeedClient>): SeedClient {
  return {
    client_id: clientId,
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code', DEVICE_GRANT],
    scope: 'openid orders.read',
    ...extra,
  };
}

beforeAll(async () => {
  key = await clientKey('ES256');
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    methodClient('m-basic', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' }),
    methodClient('m-post', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_post' }),
    methodClient('m-jwt', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key.publicJwk] } }),
    methodClient('m-none', {}),
    methodClient('m-python', { client_secret: AWKWARD_SECRET }),
  ];
  ({ app, close } = await startTestApp({ seed }));
  metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
});
afterAll(() => close());

type Endpoint = 'token' | 'par' | 'device' | 'revocation' | 'introspection';

/** Where each endpoint is, which metadata lists its methods (RFC 9126 §2, RFC 8628 §3.1: as token). */
const ENDPOINTS: Record<Endpoint, { url: () => string; methods: string }> = {
  token: { url: () => metadata.token_endpoint as string, methods: 'token_endpoint_auth_methods_supported' },
  par: {
    url: () => metadata.pushed_authorization_request_endpoint as string,
    methods: 'token_endpoint_auth_methods_supported',
  },
  device: {
    url: () => metadata.device_authorization_endpoint as string,
    methods: 'token_endpoint_auth_methods_supported',
  },
  revocation: {
    url: () => metadata.revocation_endpoint as string,
    methods: 'revocation_endpoint_auth_methods_supported',
  },
  introspection: {
    url: () => metadata.introspection_endpoint as string,
    methods: 'introspection_endpoint_auth_methods_supported',
  },
};

/** A request body each endpoint accepts once the caller is authenticated. */
function bodyFor(endpoint: Endpoint): Record<string, string> {
  switch (endpoint) {
    case 'token':
      // Authentication passes; the (unknown) code then fails on its own: invalid_grant.
      return { grant_type: 'authorization_code', code: 'unknown', redirect_uri: REDIRECT_URI };
    case 'par':
      return {
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      };
    case 'device':
      return { scope: 'openid' };
    default:
      return { token: 'not-a-token' };
  }
}

/** The status an authenticated request gets from each endpoint. */
const SUCCESS: Record<Endpoint, number> = {
  token: 400,
  par: 201,
  device: 200,
  revocation: 200,
  introspection: 200,
};

/** The credentials of `method` for a client registered with it. */
async function credentials(
  method: string,
  endpoint: Endpoint,
): Promise<{ headers: Record<string, string>; params: Record<string, string> }> {
  switch (method) {
    case 'client_secret_basic':
      return { headers: { authorization: basicAuthorization('m-basic', SECRET) }, params: {} };
    case 'client_secret_post':
      return { headers: {}, params: { client_id: 'm-post', client_secret: SECRET } };
    case 'private_key_jwt':
      return { headers: {}, params: await assertionParams('m-jwt', key, { aud: ENDPOINTS[endpoint].url() }) };
    case 'none':
      return { headers: {}, params: { client_id: 'm-none' } };
    default:
      throw new Error(`the test does not know ${method}`);
  }
}

function post(url: string, headers: Record<string, string>, params: Record<string, string>) {
  return app.inject({
    method: 'POST',
    url: new URL(url).pathname,
    headers: { ...FORM, ...headers },
    payload: form(params),
  });
}

describe('discovery and the endpoints agree on client authentication', () => {
  it('advertises the same methods and algorithms the handlers use', () => {
    expect(metadata.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
      'none',
    ]);
    expect(metadata.introspection_endpoint_auth_methods_supported).not.toContain('none');
    for (const prefix of ['token', 'revocation', 'introspection']) {
      const algs = metadata[`${prefix}_endpoint_auth_signing_alg_values_supported`] as string[];
      expect(algs).toEqual(expect.arrayContaining(['ES256', 'PS256', 'EdDSA']));
      expect(algs).not.toContain('HS256');
      expect(algs).not.toContain('none');
    }
  });

  it('accepts every advertised method at every endpoint', async () => {
    const tried: string[] = [];
    for (const endpoint of Object.keys(ENDPOINTS) as Endpoint[]) {
      for (const method of metadata[ENDPOINTS[endpoint].methods] as string[]) {
        const { headers, params } = await credentials(method, endpoint);
        const response = await post(ENDPOINTS[endpoint].url(), headers, { ...params, ...bodyFor(endpoint) });
        expect({ endpoint, method, status: response.statusCode }).toEqual({
          endpoint,
          method,
          status: SUCCESS[endpoint],
        });
        if (endpoint === 'token') expect(response.json().error).toBe('invalid_grant');
        tried.push(`${endpoint}:${method}`);
      }
    }
    expect(tried).toHaveLength(19);
  });

  it('accepts a resource at introspection by each advertised secret method (Basic and the body)', async () => {
    const byBasic = await post(
      ENDPOINTS.introspection.url(),
      { authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi) },
      { token: 'x' },
    );
    // What mod_auth_openidc does as a resource server: client_secret_post.
    const byPost = await post(
      ENDPOINTS.introspection.url(),
      {},
      { client_id: ORDERS_API, client_secret: TEST_SECRETS.ordersApi, token: 'x' },
    );
    expect([byBasic.statusCode, byPost.statusCode]).toEqual([200, 200]);
    expect(byPost.json()).toEqual({ active: false });
  });

  it('refuses what is not advertised: none at introspection, client_secret_jwt anywhere', async () => {
    const none = await post(ENDPOINTS.introspection.url(), {}, { client_id: 'm-none', token: 'x' });
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toBe('invalid_client');
    for (const endpoint of Object.keys(ENDPOINTS) as Endpoint[]) {
      // client_secret_jwt (RFC 7523 with an HMAC over the client secret) is not offered.
      const now = Math.floor(Date.now() / 1000);
      const hs256 = await new SignJWT({
        iss: 'm-post',
        sub: 'm-post',
        aud: TEST_ISSUER,
        jti: `${endpoint}-hs`,
        exp: now + 60,
      })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(SECRET));
      const response = await post(
        ENDPOINTS[endpoint].url(),
        {},
        {
          client_id: 'm-post',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: hs256,
          ...bodyFor(endpoint),
        },
      );
      expect({ endpoint, status: response.statusCode }).toEqual({ endpoint, status: 401 });
    }
  });

  it('lets a client use only its own registered method', async () => {
    const postByBasicClient = await post(
      ENDPOINTS.revocation.url(),
      {},
      { client_id: 'm-basic', client_secret: SECRET, token: 'x' },
    );
    const basicByPostClient = await post(
      ENDPOINTS.revocation.url(),
      { authorization: basicAuthorization('m-post', SECRET) },
      { token: 'x' },
    );
    const secretByKeyClient = await post(
      ENDPOINTS.revocation.url(),
      {},
      { client_id: 'm-jwt', client_secret: SECRET, token: 'x' },
    );
    expect([postByBasicClient, basicByPostClient, secretByKeyClient].map((r) => r.statusCode)).toEqual([
      401, 401, 401,
    ]);
  });
});

describe('lenient where real clients are wrong', () => {
  const rawBasic = (id: string, secret: string) =>
    `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

  it('accepts a secret with +, %, : and a space sent in Basic without form-encoding', async () => {
    for (const authorization of [
      rawBasic('m-python', AWKWARD_SECRET),
      basicAuthorization('m-python', AWKWARD_SECRET),
    ]) {
      const response = await post(ENDPOINTS.device.url(), { authorization }, { scope: 'openid' });
      expect(response.statusCode).toBe(200);
    }
  });

  it('answers a wrong secret the same way, raw or encoded', async () => {
    const wrong = AWKWARD_SECRET.replace('d%e', 'x%e');
    for (const authorization of [rawBasic('m-python', wrong), basicAuthorization('m-python', wrong)]) {
      const response = await post(ENDPOINTS.device.url(), { authorization }, { scope: 'openid' });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    }
  });

  it('answers POST /revoke with 200, application/json and {}', async () => {
    const response = await post(
      ENDPOINTS.revocation.url(),
      { authorization: basicAuthorization('m-basic', SECRET) },
      { token: 'whatever' },
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({});
  });
});
