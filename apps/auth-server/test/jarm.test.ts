import { computeS256Challenge } from '@oidc-orders/oauth-core';
import type { LightMyRequestResponse } from 'fastify';
import { createLocalJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { assertionParams, type ClientKey, clientKey, signRequestObject } from './helpers/client-keys.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * JARM (JWT Secured Authorization Response Mode): `jwt`, `query.jwt` and `form_post.jwt` answer
 * with one `response` JWT signed by the server's keys (checked here with jose, claim by claim,
 * against the published JWKS), errors included; `fragment.jwt` is refused; a client may be
 * required to use it (seed `require_signed_authorization_response`, implied for a FAPI 2.0
 * client that signs its requests). openid-client as the counterpart: `jarm.e2e.test.ts`.
 */

const REDIRECT_URI = 'https://jarm.example.test/callback';
const BANK_REDIRECT_URI = 'https://bank.example.test/callback';
const SECRET = 'jarm-secret-for-tests-0123456789abcdef';

let app: TestApp;
let close: () => Promise<void>;
let bankKey: ClientKey;

beforeAll(async () => {
  bankKey = await clientKey('ES256');
  const seed = testSeed();
  const secretClient = (clientId: string, extra: Record<string, unknown> = {}) => ({
    client_id: clientId,
    client_secret: SECRET,
    redirect_uris: [REDIRECT_URI],
    scope: 'openid',
    skip_consent: true,
    ...extra,
  });
  seed.clients = [
    ...(seed.clients ?? []),
    secretClient('jarm-web'),
    secretClient('jarm-only', {
      require_signed_authorization_response: true,
      authorization_signed_response_alg: 'ES256',
    }),
    {
      // FAPI 2.0 Message Signing: signed requests, so signed responses are required too.
      client_id: 'bank-ms',
      profile: 'fapi2',
      require_signed_request_object: true,
      jwks: { keys: [bankKey.publicJwk] },
      redirect_uris: [BANK_REDIRECT_URI],
      scope: 'openid',
      skip_consent: true,
    },
  ];
  ({ app, close } = await startTestApp({ seed }));
});
afterAll(() => close());

const now = () => Math.floor(Date.now() / 1000);

function authorizePath(clientId: string, extra: Record<string, string> = {}) {
  return `/authorize?${new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'openid',
    state: 'st-1',
    code_challenge: computeS256Challenge('v'.repeat(43)),
    code_challenge_method: 'S256',
    ...extra,
  })}`;
}

/** /authorize, then the login page: the server's answer to the login form, and redirects followed on this server. */
async function signIn(path: string): Promise<LightMyRequestResponse> {
  const browser = new TestBrowser(app);
  const loginPage = await browser.follow(await browser.get(path));
  expect(loginPage.statusCode).toBe(200);
  return browser.follow(
    await browser.post(browser.lastUrl, {
      ...hiddenFields(loginPage.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    }),
  );
}

/** The JWT verified against the server's JWKS as a client would: signature, iss, aud, exp. */
async function verifyResponse(jwt: string, clientId: string): Promise<JWTPayload> {
  const jwks = createLocalJWKSet((await app.inject({ method: 'GET', url: '/jwks' })).json());
  const { payload } = await jwtVerify(jwt, jwks, { issuer: TEST_ISSUER, audience: clientId });
  return payload;
}

/** A query delivery carrying only JARM's `response` (nothing else in the clear). */
function responseInQuery(response: LightMyRequestResponse, redirectUri = REDIRECT_URI): string {
  const location = locationOf(response);
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
  expect([...location.searchParams.keys()]).toEqual(['response']);
  return location.searchParams.get('response') as string;
}

describe('response_mode jwt and query.jwt: the response as one signed JWT in the query', () => {
  it.each(['jwt', 'query.jwt'])(
    '%s: code, state, iss, aud, iat and exp, signed RS256 by a published key',
    async (mode) => {
      const jwt = responseInQuery(await signIn(authorizePath('jarm-web', { response_mode: mode })));
      const header = decodeProtectedHeader(jwt);
      expect(header.alg).toBe('RS256');
      const jwks = (await app.inject({ method: 'GET', url: '/jwks' })).json();
      expect(jwks.keys.map((key: { kid: string }) => key.kid)).toContain(header.kid);
      const claims = await verifyResponse(jwt, 'jarm-web');
      expect(Object.keys(claims).sort()).toEqual(['aud', 'code', 'exp', 'iat', 'iss', 'state']);
      expect(claims).toMatchObject({ iss: TEST_ISSUER, aud: 'jarm-web', state: 'st-1' });
      expect(claims.code).toEqual(expect.any(String));
      expect((claims.exp as number) - (claims.iat as number)).toBe(300);
    },
  );

  it('signs errors too: prompt=none without a session is login_required inside the JWT', async () => {
    const response = await new TestBrowser(app).get(
      authorizePath('jarm-web', { response_mode: 'jwt', prompt: 'none' }),
    );
    const claims = await verifyResponse(responseInQuery(response), 'jarm-web');
    expect(claims).toMatchObject({
      error: 'login_required',
      state: 'st-1',
      iss: TEST_ISSUER,
      aud: 'jarm-web',
    });
    expect(claims.error_description).toEqual(expect.any(String));
    expect(claims.code).toBeUndefined();
  });

  it('refuses fragment.jwt (no fragment answers for code): invalid_request, signed, by the query', async () => {
    const response = await new TestBrowser(app).get(
      authorizePath('jarm-web', { response_mode: 'fragment.jwt' }),
    );
    expect(locationOf(response).hash).toBe('');
    const claims = await verifyResponse(responseInQuery(response), 'jarm-web');
    expect(claims).toMatchObject({ error: 'invalid_request', state: 'st-1', iss: TEST_ISSUER });
  });
});

describe('response_mode form_post.jwt', () => {
  it('posts one hidden `response` to the redirect URI, on a page the CSP lets post there', async () => {
    const page = await signIn(authorizePath('jarm-web', { response_mode: 'form_post.jwt' }));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`action="${REDIRECT_URI}"`);
    const fields = hiddenFields(page.body);
    expect(Object.keys(fields)).toEqual(['response']);
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("form-action 'self' https://jarm.example.test");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const claims = await verifyResponse(fields.response as string, 'jarm-web');
    expect(claims).toMatchObject({
      iss: TEST_ISSUER,
      aud: 'jarm-web',
      state: 'st-1',
      code: expect.any(String),
    });
  });
});

describe('a client required to receive signed responses (require_signed_authorization_response)', () => {
  it('gets them without asking, in its algorithm (ES256)', async () => {
    const jwt = responseInQuery(await signIn(authorizePath('jarm-only')));
    expect(decodeProtectedHeader(jwt).alg).toBe('ES256');
    expect(await verifyResponse(jwt, 'jarm-only')).toMatchObject({ code: expect.any(String), state: 'st-1' });
  });

  it.each([
    ['query', 'query'],
    ['form_post', 'form_post'],
  ])('is refused response_mode=%s: invalid_request, itself signed', async (mode) => {
    const response = await new TestBrowser(app).get(authorizePath('jarm-only', { response_mode: mode }));
    const jwt =
      mode === 'query' ? responseInQuery(response) : (hiddenFields(response.body).response as string);
    expect(await verifyResponse(jwt, 'jarm-only')).toMatchObject({ error: 'invalid_request', state: 'st-1' });
  });
});

describe('a FAPI 2.0 Message Signing client (fapi2 with require_signed_request_object)', () => {
  async function push(params: Record<string, string>) {
    const request = await signRequestObject(
      'bank-ms',
      bankKey,
      {
        response_type: 'code',
        redirect_uri: BANK_REDIRECT_URI,
        scope: 'openid',
        state: 'st-ms',
        code_challenge: computeS256Challenge('w'.repeat(43)),
        code_challenge_method: 'S256',
        ...params,
      },
      { now: now() },
    );
    return app.inject({
      method: 'POST',
      url: '/par',
      headers: FORM,
      payload: form({ ...(await assertionParams('bank-ms', bankKey, { now: now() })), request }),
    });
  }

  it('is answered by PAR and /authorize with an ES256 JARM response', async () => {
    const pushed = await push({ response_mode: 'jwt' });
    expect(pushed.statusCode).toBe(201);
    const requestUri = encodeURIComponent(pushed.json().request_uri);
    const answer = await signIn(`/authorize?client_id=bank-ms&request_uri=${requestUri}`);
    const jwt = responseInQuery(answer, BANK_REDIRECT_URI);
    expect(decodeProtectedHeader(jwt).alg).toBe('ES256');
    expect(await verifyResponse(jwt, 'bank-ms')).toMatchObject({ code: expect.any(String), state: 'st-ms' });
  });

  it('is refused a plain response_mode at PAR (400 invalid_request)', async () => {
    const pushed = await push({ response_mode: 'query' });
    expect([pushed.statusCode, pushed.json().error]).toEqual([400, 'invalid_request']);
  });
});
