import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedClient } from '../src/schemas/seed.js';
import { parseSeedDocument } from '../src/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import {
  assertionParams,
  type ClientKey,
  clientKey,
  rsaClientKey,
  signRequestObject,
} from './helpers/client-keys.js';
import { createDpopKey, type DpopKey, dpopProof } from './helpers/dpop.js';
import { issueCode, pkcePair } from './helpers/flows.js';
import { ORDERS_API, TEST_SECRETS, testSeed, WEB_REDIRECT_URI } from './helpers/seed.js';

/**
 * Rule by rule: the FAPI 2.0 profile per client, `dpop_jkt` / DPoP at PAR
 * binding the code, signed request objects at /par and /authorize, JWT introspection responses.
 */

const BANK_REDIRECT_URI = 'https://bank.example.test/callback';
const JAR_REDIRECT_URI = 'https://jar.example.test/callback';
const JAR_SECRET = 'jar-secret-for-tests-0123456789abcdef';

let app: TestApp;
let close: () => Promise<void>;
let bankKey: ClientKey;
let rsaKey: ReturnType<typeof rsaClientKey>;
let jarKey: ClientKey;
let offset = 0;
const now = () => Math.floor(Date.now() / 1000) + offset;

function bankClient(clientId: string, key: ClientKey): SeedClient {
  return {
    client_id: clientId,
    profile: 'fapi2',
    jwks: { keys: [key.publicJwk] },
    redirect_uris: [BANK_REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
    scope: 'openid offline_access orders.read',
    skip_consent: true,
  };
}

beforeAll(async () => {
  [bankKey, jarKey] = await Promise.all([clientKey('ES256'), clientKey('ES256')]);
  rsaKey = rsaClientKey();
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    bankClient('bank', bankKey),
    // An RSA key: PS256 is allowed for FAPI 2.0 clients, RS256 is not (§5.4.1).
    bankClient('bank-rsa', rsaKey.withAlg('PS256')),
    {
      client_id: 'jar',
      client_secret: JAR_SECRET,
      jwks: { keys: [jarKey.publicJwk] },
      require_signed_request_object: true,
      redirect_uris: [JAR_REDIRECT_URI],
      scope: 'openid orders.read',
      skip_consent: true,
    },
  ];
  // Codes live 10 minutes by configuration; the profile still caps a FAPI 2.0 client's at 60 s.
  ({ app, close } = await startTestApp({
    seed,
    env: { AUTHORIZATION_CODE_TTL: '600' },
    clock: { nowSeconds: now },
  }));
});
afterAll(() => close());

function post(url: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: form(params) });
}

interface PushOptions {
  dpop?: DpopKey;
  params?: Record<string, string>;
  /** Seconds the client's clock runs ahead of ours, for the DPoP proof and the client assertion. */
  ahead?: { dpop?: number; assertion?: number };
  /** The request object's `nbf` (`null`: left out); now by default. */
  nbf?: number | null;
}

/** PAR for `bank` with a signed request object; optionally a DPoP proof too. */
async function pushBankRequest(options: PushOptions = {}) {
  const { verifier, challenge } = pkcePair();
  const requestObject = await signRequestObject(
    'bank',
    bankKey,
    {
      response_type: 'code',
      redirect_uri: BANK_REDIRECT_URI,
      scope: 'openid orders.read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
      ...options.params,
    },
    { now: now(), nbf: options.nbf },
  );
  const headers: Record<string, string> = options.dpop
    ? {
        dpop: await dpopProof(options.dpop, {
          htu: `${TEST_ISSUER}/par`,
          iat: now() + (options.ahead?.dpop ?? 0),
        }),
      }
    : {};
  const assertionNow = now() + (options.ahead?.assertion ?? 0);
  const response = await post(
    '/par',
    { ...(await assertionParams('bank', bankKey, { now: assertionNow })), request: requestObject },
    headers,
  );
  return { response, verifier };
}

/** PAR, then /authorize and the login page: the code in the callback. */
async function bankCode(options: PushOptions = {}) {
  const { response, verifier } = await pushBankRequest(options);
  expect(response.statusCode).toBe(201);
  const browser = new TestBrowser(app);
  const requestUri = encodeURIComponent(response.json().request_uri);
  const loginPage = await browser.follow(
    await browser.get(`/authorize?client_id=bank&request_uri=${requestUri}`),
  );
  const callback = locationOf(
    await browser.follow(
      await browser.post(browser.lastUrl, {
        ...hiddenFields(loginPage.body),
        username: 'alice',
        password: TEST_SECRETS.alicePassword,
      }),
    ),
  );
  expect(callback.searchParams.get('iss')).toBe(TEST_ISSUER);
  return { code: callback.searchParams.get('code') as string, verifier };
}

async function redeem(code: string, verifier: string, dpop: DpopKey | null) {
  const headers: Record<string, string> = dpop
    ? { dpop: await dpopProof(dpop, { htu: `${TEST_ISSUER}/token`, iat: now() }) }
    : {};
  return post(
    '/token',
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: BANK_REDIRECT_URI,
      code_verifier: verifier,
      ...(await assertionParams('bank', bankKey, { now: now() })),
    },
    headers,
  );
}

describe('the seed refuses a FAPI 2.0 client whose registration cannot meet the profile', () => {
  const key = {
    kty: 'EC',
    crv: 'P-256',
    x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
    y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
  };
  const base = {
    client_id: 'f',
    profile: 'fapi2',
    jwks: { keys: [key] },
    redirect_uris: [BANK_REDIRECT_URI],
  };
  it.each([
    [
      'token_endpoint_auth_method',
      { token_endpoint_auth_method: 'client_secret_basic', client_secret: 's', jwks: undefined },
    ],
    ['client_secret', { client_secret: 'not-for-fapi' }],
    ['jwks', { jwks: undefined }],
    ['dpop_bound_access_tokens', { dpop_bound_access_tokens: false }],
    ['require_pushed_authorization_requests', { require_pushed_authorization_requests: false }],
    ['id_token_signed_response_alg', { id_token_signed_response_alg: 'RS256' }],
    ['grant_types', { grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] }],
  ])('names %s', (member, override) => {
    const client = JSON.parse(JSON.stringify({ ...base, ...override }));
    expect(() => parseSeedDocument({ clients: [client] })).toThrow(new RegExp(`\\.${member}: `));
  });

  it('accepts a registration that meets it, and refuses private key material in jwks', () => {
    expect(() => parseSeedDocument({ clients: [base] })).not.toThrow();
    const leaked = { ...base, jwks: { keys: [{ ...key, d: 'secret' }] } };
    expect(() => parseSeedDocument({ clients: [leaked] })).toThrow(
      /jwks\.keys\[0\]: holds private key material/,
    );
  });
});

describe('FAPI 2.0 client authentication', () => {
  it('refuses client_secret_basic and client_secret_post from a FAPI 2.0 client', async () => {
    const basic = await post(
      '/par',
      { response_type: 'code' },
      { authorization: basicAuthorization('bank', 'x') },
    );
    const body = await post('/par', { client_id: 'bank', client_secret: 'x' });
    expect([basic.statusCode, body.statusCode]).toEqual([401, 401]);
  });

  it('accepts only the issuer as the assertion aud (not the endpoint URL)', async () => {
    const { response } = await pushBankRequest();
    expect(response.statusCode).toBe(201);
    const params = await assertionParams('bank', bankKey, { aud: `${TEST_ISSUER}/par`, now: now() });
    const endpointAud = await post('/par', { ...params, response_type: 'code' });
    expect([endpointAud.statusCode, endpointAud.json().error]).toEqual([401, 'invalid_client']);
  });

  it('refuses RS256 assertions but accepts PS256 with the same RSA key', async () => {
    const ps256 = await post('/revoke', {
      ...(await assertionParams('bank-rsa', rsaKey.withAlg('PS256'), { now: now() })),
      token: 'x',
    });
    const rs256 = await post('/revoke', {
      ...(await assertionParams('bank-rsa', rsaKey.withAlg('RS256'), { now: now() })),
      token: 'x',
    });
    expect([ps256.statusCode, rs256.statusCode]).toEqual([200, 401]);
  });
});

describe('FAPI 2.0 authorization requests', () => {
  it('refuses /authorize without PAR, redirecting invalid_request with iss', async () => {
    const browser = new TestBrowser(app);
    const { challenge } = pkcePair();
    const response = await browser.get(
      `/authorize?${new URLSearchParams({
        client_id: 'bank',
        response_type: 'code',
        redirect_uri: BANK_REDIRECT_URI,
        scope: 'openid',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'x',
      })}`,
    );
    const location = locationOf(response);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('iss')).toBe(TEST_ISSUER);
  });

  it.each([
    ['without nbf', null],
    ['with nbf more than 60 minutes old', -3601],
  ])('refuses at PAR a request object %s (FAPI 2.0 Message Signing §5.3.1)', async (_name, nbfOffset) => {
    const { response } = await pushBankRequest({ nbf: nbfOffset === null ? null : now() + nbfOffset });
    expect([response.statusCode, response.json().error]).toEqual([400, 'invalid_request_object']);
  });

  it('refuses a pushed request without PKCE', async () => {
    const { response } = await pushBankRequest({ params: { code_challenge: '', code_challenge_method: '' } });
    expect([response.statusCode, response.json().error]).toEqual([400, 'invalid_request']);
  });

  it('refuses an access token request without a DPoP proof (sender-constrained tokens)', async () => {
    const { code, verifier } = await bankCode();
    const response = await redeem(code, verifier, null);
    expect([response.statusCode, response.json().error]).toEqual([400, 'invalid_request']);
    const bound = await redeem(code, verifier, await createDpopKey());
    expect(bound.statusCode).toBe(200);
    expect(bound.json().token_type).toBe('DPoP');
  });

  it('expires a FAPI 2.0 code after 60 s, though the configured lifetime is longer', async () => {
    const { code, verifier } = await bankCode();
    const { verifier: webVerifier, challenge } = pkcePair();
    const webCode = await issueCode(app, {
      clientId: 'web',
      redirectUri: WEB_REDIRECT_URI,
      scope: 'openid',
      challenge,
    });
    offset += 61;
    try {
      const response = await redeem(code, verifier, await createDpopKey());
      expect([response.statusCode, response.json().error]).toEqual([400, 'invalid_grant']);
      const web = await post(
        '/token',
        {
          grant_type: 'authorization_code',
          code: webCode,
          redirect_uri: WEB_REDIRECT_URI,
          code_verifier: webVerifier,
        },
        { authorization: basicAuthorization('web', TEST_SECRETS.web) },
      );
      expect(web.statusCode).toBe(200);
    } finally {
      offset -= 61;
    }
  });
});

describe('codes bound to a DPoP key (RFC 9449 §10)', () => {
  it('binds the code to the key of a DPoP proof at PAR: another key or none cannot redeem it', async () => {
    const dpop = await createDpopKey();
    const { code, verifier } = await bankCode({ dpop });
    const wrongKey = await redeem(code, verifier, await createDpopKey());
    expect([wrongKey.statusCode, wrongKey.json().error]).toEqual([400, 'invalid_grant']);
    const rightKey = await redeem(code, verifier, dpop);
    expect(rightKey.statusCode).toBe(200);
  });

  it('binds the code to dpop_jkt inside the request object', async () => {
    const dpop = await createDpopKey();
    const { code, verifier } = await bankCode({ params: { dpop_jkt: dpop.jkt } });
    expect((await redeem(code, verifier, await createDpopKey())).json().error).toBe('invalid_grant');
    expect((await redeem(code, verifier, dpop)).statusCode).toBe(200);
  });

  it('binds the code to dpop_jkt sent to /authorize directly (here inside a request object by value)', async () => {
    const dpop = await createDpopKey();
    const { verifier, challenge } = pkcePair();
    const request = await signRequestObject(
      'jar',
      jarKey,
      {
        response_type: 'code',
        redirect_uri: JAR_REDIRECT_URI,
        scope: 'openid',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        dpop_jkt: dpop.jkt,
      },
      { now: now() },
    );
    const browser = new TestBrowser(app);
    const loginPage = await browser.follow(await browser.get(`/authorize?client_id=jar&request=${request}`));
    const callback = locationOf(
      await browser.follow(
        await browser.post(browser.lastUrl, {
          ...hiddenFields(loginPage.body),
          username: 'alice',
          password: TEST_SECRETS.alicePassword,
        }),
      ),
    );
    const code = callback.searchParams.get('code') as string;
    const redeemWith = async (key: DpopKey | null) =>
      post(
        '/token',
        { grant_type: 'authorization_code', code, redirect_uri: JAR_REDIRECT_URI, code_verifier: verifier },
        {
          authorization: basicAuthorization('jar', JAR_SECRET),
          ...(key ? { dpop: await dpopProof(key, { htu: `${TEST_ISSUER}/token`, iat: now() }) } : {}),
        },
      );
    expect((await redeemWith(null)).json().error).toBe('invalid_grant');
    expect((await redeemWith(await createDpopKey())).json().error).toBe('invalid_grant');
    const bound = await redeemWith(dpop);
    expect(bound.statusCode).toBe(200);
    expect(bound.json().token_type).toBe('DPoP');
  });

  it('refuses a dpop_jkt that differs from the DPoP proof sent to PAR', async () => {
    const dpop = await createDpopKey();
    const other = await createDpopKey();
    const { response } = await pushBankRequest({ dpop, params: { dpop_jkt: other.jkt } });
    expect([response.statusCode, response.json().error]).toEqual([400, 'invalid_request']);
  });
});

describe('clock skew (FAPI 2.0 SP §5.3.2.1)', () => {
  it('accepts a DPoP proof and a client assertion issued 8 s in the future at PAR, and the code they bind', async () => {
    const dpop = await createDpopKey();
    const { code, verifier } = await bankCode({ dpop, ahead: { dpop: 8, assertion: 8 } });
    const bound = await redeem(code, verifier, dpop);
    expect([bound.statusCode, bound.json().token_type]).toEqual([200, 'DPoP']);
  });

  it.each([11, 61])('refuses a DPoP proof issued %i s in the future', async (seconds) => {
    const { response } = await pushBankRequest({ dpop: await createDpopKey(), ahead: { dpop: seconds } });
    expect([response.statusCode, response.json().error]).toEqual([400, 'invalid_dpop_proof']);
  });

  it.each([11, 61])('refuses a client assertion issued %i s in the future', async (seconds) => {
    const { response } = await pushBankRequest({
      dpop: await createDpopKey(),
      ahead: { assertion: seconds },
    });
    expect([response.statusCode, response.json().error]).toEqual([401, 'invalid_client']);
  });
});

describe('signed request objects (RFC 9101)', () => {
  const jarParams = () => ({
    response_type: 'code',
    redirect_uri: JAR_REDIRECT_URI,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'jar-state',
  });

  it('takes the parameters from a request object by value at /authorize', async () => {
    const request = await signRequestObject('jar', jarKey, jarParams(), { now: now() });
    const response = await new TestBrowser(app).get(`/authorize?client_id=jar&request=${request}`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toMatch(/^\/interaction\/[^/]+\/login(\?|$)/);
  });

  it('refuses an unsigned request from a client that requires signed request objects', async () => {
    const response = await new TestBrowser(app).get(
      `/authorize?client_id=jar&${new URLSearchParams(jarParams())}`,
    );
    expect(locationOf(response).searchParams.get('error')).toBe('invalid_request');
  });

  it.each([
    ['signed by another key', () => signRequestObject('jar', bankKey, jarParams(), { now: now() })],
    [
      'for another audience',
      () => signRequestObject('jar', jarKey, jarParams(), { aud: 'https://x.test', now: now() }),
    ],
    ['expired', () => signRequestObject('jar', jarKey, jarParams(), { expiresIn: -30, now: now() })],
  ])('shows an error page for a request object %s, never redirecting', async (_name, make) => {
    const response = await new TestBrowser(app).get(`/authorize?client_id=jar&request=${await make()}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
  });

  it('refuses a request object used twice', async () => {
    const request = await signRequestObject('jar', jarKey, jarParams(), { now: now() });
    expect((await new TestBrowser(app).get(`/authorize?client_id=jar&request=${request}`)).statusCode).toBe(
      303,
    );
    expect((await new TestBrowser(app).get(`/authorize?client_id=jar&request=${request}`)).statusCode).toBe(
      400,
    );
  });

  const pushJar = (request: string) =>
    post('/par', { client_id: 'jar', request }, { authorization: basicAuthorization('jar', JAR_SECRET) });

  it('answers 201 at PAR for a request object without jti, as the conformance suite sends them', async () => {
    const request = await signRequestObject('jar', jarKey, jarParams(), { now: now(), jti: null });
    expect((await pushJar(request)).statusCode).toBe(201);
  });

  it('refuses at PAR a request object whose jti was already used', async () => {
    const request = await signRequestObject('jar', jarKey, jarParams(), { now: now() });
    expect((await pushJar(request)).statusCode).toBe(201);
    const replayed = await pushJar(request);
    expect([replayed.statusCode, replayed.json().error]).toEqual([400, 'invalid_request_object']);
  });

  it('accepts request_uri only as a reference from PAR', async () => {
    const response = await new TestBrowser(app).get(
      `/authorize?client_id=jar&request_uri=${encodeURIComponent('https://jar.example.test/request.jwt')}`,
    );
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
  });
});

describe('JWT-secured introspection responses (RFC 9701)', () => {
  it('answers Accept: application/token-introspection+jwt with a JWT signed by the server', async () => {
    const token = await post(
      '/token',
      { grant_type: 'client_credentials', scope: 'orders.read' },
      { authorization: basicAuthorization('service', TEST_SECRETS.service) },
    );
    const response = await post(
      '/introspect',
      { token: token.json().access_token },
      {
        authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi),
        accept: 'application/token-introspection+jwt',
      },
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/token-introspection\+jwt/);
    expect(response.headers['cache-control']).toBe('no-store');
    const jwks = (await app.inject({ method: 'GET', url: '/jwks' })).json();
    const { payload, protectedHeader } = await jwtVerify(response.body, createLocalJWKSet(jwks), {
      issuer: TEST_ISSUER,
      audience: ORDERS_API,
      typ: 'token-introspection+jwt',
      currentDate: new Date(now() * 1000),
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.token_introspection).toMatchObject({ active: true, client_id: 'service' });
  });

  it('keeps plain JSON for everyone else', async () => {
    const response = await post(
      '/introspect',
      { token: 'x' },
      { authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi), accept: 'application/json' },
    );
    expect(response.json()).toEqual({ active: false });
  });
});
