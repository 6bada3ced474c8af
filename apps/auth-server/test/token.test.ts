import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { ORDERS_API, REPORTS_API, TEST_SECRETS } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;
const logLines: string[] = [];

beforeAll(async () => {
  ({ app, close } = await startTestApp({
    logger: { level: 'trace', stream: { write: (line: string) => logLines.push(line) } },
  }));
});
afterAll(() => close());

const serviceBasic = basicAuthorization('service', TEST_SECRETS.service);

function postToken(
  payload: string,
  headers: Record<string, string> = { ...FORM, authorization: serviceBasic },
) {
  return app.inject({ method: 'POST', url: '/token', headers, payload });
}

async function jwks() {
  return createLocalJWKSet((await app.inject({ method: 'GET', url: '/jwks' })).json());
}

function expectNoStore(response: { headers: Record<string, unknown> }) {
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers.pragma).toBe('no-cache');
}

function expectOAuthError(response: { statusCode: number; json(): unknown }, status: number, error: string) {
  expect(response.statusCode).toBe(status);
  const body = response.json() as Record<string, unknown>;
  expect(body.error).toBe(error);
  expect(Object.keys(body).every((key) => key === 'error' || key === 'error_description')).toBe(true);
}

describe('client_credentials', () => {
  it('issues a JWT access token for the resource owning the scope, verifiable with the JWKS', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', scope: 'orders.read' }));
    expect(response.statusCode).toBe(200);
    expectNoStore(response);
    const body = response.json();
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' });
    expect(body.expires_in).toBeGreaterThan(0);
    expect(body).not.toHaveProperty('refresh_token');
    expect(body).not.toHaveProperty('id_token');

    // RFC 9068: typ at+jwt, resource's alg (ES256 by default), kid from the JWKS.
    const header = decodeProtectedHeader(body.access_token);
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    const { payload } = await jwtVerify(body.access_token, await jwks(), {
      issuer: TEST_ISSUER,
      audience: ORDERS_API,
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ sub: 'service', client_id: 'service', scope: 'orders.read' });
    expect(typeof payload.jti).toBe('string');
  });

  it('issues an opaque token for a resource configured so, which its resource can introspect', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', scope: 'reports.read' }));
    expect(response.statusCode).toBe(200);
    const { access_token: token } = response.json();
    expect(token.split('.')).toHaveLength(1);
    const introspection = await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi) },
      payload: form({ token }),
    });
    expect(introspection.json()).toMatchObject({
      active: true,
      client_id: 'service',
      scope: 'reports.read',
      aud: REPORTS_API,
    });
  });

  it('accepts client_secret_post as well as client_secret_basic', async () => {
    const post = await postToken(
      form({ grant_type: 'client_credentials', client_id: 'service', client_secret: TEST_SECRETS.service }),
      { ...FORM },
    );
    expect(post.statusCode).toBe(200);
    const basic = await postToken(form({ grant_type: 'client_credentials' }));
    expect(basic.statusCode).toBe(200);
  });

  it('rejects a wrong secret with 401 invalid_client and a WWW-Authenticate challenge', async () => {
    const basic = await postToken(form({ grant_type: 'client_credentials' }), {
      ...FORM,
      authorization: basicAuthorization('service', 'wrong-secret'),
    });
    expectOAuthError(basic, 401, 'invalid_client');
    expect(basic.headers['www-authenticate']).toMatch(/^Basic /);
    expectNoStore(basic);

    const post = await postToken(
      form({ grant_type: 'client_credentials', client_id: 'service', client_secret: 'wrong-secret' }),
      { ...FORM },
    );
    expectOAuthError(post, 401, 'invalid_client');

    const unknown = await postToken(form({ grant_type: 'client_credentials' }), {
      ...FORM,
      authorization: basicAuthorization('nobody', 'x'),
    });
    expectOAuthError(unknown, 401, 'invalid_client');
  });

  it('refuses a public client (unauthorized_client) and OIDC scopes (invalid_scope)', async () => {
    expectOAuthError(
      await postToken(form({ grant_type: 'client_credentials', client_id: 'spa' }), { ...FORM }),
      400,
      'unauthorized_client',
    );
    expectOAuthError(
      await postToken(form({ grant_type: 'client_credentials', scope: 'openid' })),
      400,
      'invalid_scope',
    );
  });
});

describe('request format', () => {
  it('answers a JSON body with 400 invalid_request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { 'content-type': 'application/json', authorization: serviceBasic },
      payload: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expectOAuthError(response, 400, 'invalid_request');
    expectNoStore(response);
  });

  it.each([
    ['text/plain', 'grant_type=client_credentials'],
    ['multipart/form-data; boundary=x', '--x\r\n\r\n--x--'],
    ['application/xml', '<a/>'],
  ])('answers content type %s with 400 invalid_request', async (contentType, payload) => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { 'content-type': contentType, authorization: serviceBasic },
      payload,
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('answers a request without a body with 400 invalid_request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { authorization: serviceBasic },
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('accepts a charset parameter on the form content type', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials' }), {
      'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
      authorization: serviceBasic,
    });
    expect(response.statusCode).toBe(200);
  });

  it('rejects repeated parameters with 400 invalid_request', async () => {
    expectOAuthError(
      await postToken('grant_type=client_credentials&scope=orders.read&scope=orders.write'),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await postToken('grant_type=client_credentials&grant_type=client_credentials'),
      400,
      'invalid_request',
    );
  });

  it('lets resource repeat (RFC 8707), leaving the decision to the grant', async () => {
    const one = await postToken(
      form({ grant_type: 'client_credentials', resource: ORDERS_API, scope: 'orders.read' }),
    );
    expect(one.statusCode).toBe(200);
    const two = await postToken(
      form({ grant_type: 'client_credentials', resource: [ORDERS_API, REPORTS_API] }),
    );
    expectOAuthError(two, 400, 'invalid_target');
  });

  it.each([
    ['unknown', 'urn:example:unknown', 'unsupported_grant_type'],
    ['password', 'password', 'unsupported_grant_type'],
    ['implicit', 'implicit', 'unsupported_grant_type'],
  ])('answers the %s grant type with %s', async (_name, grantType, error) => {
    const response = await postToken(form({ grant_type: grantType, username: 'alice', password: 'x' }));
    expectOAuthError(response, 400, error);
    expectNoStore(response);
  });

  it('answers a missing grant_type with invalid_request', async () => {
    expectOAuthError(await postToken(form({ scope: 'orders.read' })), 400, 'invalid_request');
  });

  it('refuses an oversized body with 413 invalid_request, not a 5xx', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', padding: 'x'.repeat(20_000) }));
    expectOAuthError(response, 413, 'invalid_request');
  });

  it.each([
    ['malformed percent-encoding', 'grant_type=client_credentials&scope=%E0%A4%A'],
    ['a lone percent', 'grant_type=%&scope=%zz'],
    ['prototype keys', '__proto__=x&constructor=y&grant_type=client_credentials'],
    ['very long values', form({ grant_type: 'x'.repeat(8000), client_id: 'y'.repeat(7000) })],
    ['control characters', form({ grant_type: 'client_credentials', scope: '\u0000\u0001' })],
    ['an empty body', ''],
    ['only separators', '&&&=&=='],
  ])('never answers %s with a 5xx', async (_name, payload) => {
    const response = await postToken(payload);
    expect(response.statusCode).toBeGreaterThanOrEqual(200);
    expect(response.statusCode).toBeLessThan(500);
    if (response.statusCode >= 400) expect(typeof response.json().error).toBe('string');
  });

  it.each([
    ['a control character in a header value', { 'x-note': 'a\u0001b' }],
    ['a line feed in a repeated header', { 'x-note': ['fine', 'a\nb'] }],
  ])('refuses %s before the grant runs: 400 invalid_request', async (_name, extra) => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, authorization: serviceBasic, ...extra },
      payload: form({ grant_type: 'client_credentials' }),
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('never answers malformed Basic credentials with a 5xx', async () => {
    for (const authorization of [
      'Basic',
      'Basic !!!',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      'Basic %%%',
    ]) {
      const response = await postToken(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization,
      });
      expect(response.statusCode).toBeLessThan(500);
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('logging', () => {
  it('never logs token request bodies, secrets or credentials; lines carry request ids', async () => {
    await postToken(
      form({ grant_type: 'client_credentials', client_id: 'service', client_secret: TEST_SECRETS.service }),
      {
        ...FORM,
      },
    );
    await postToken(form({ grant_type: 'client_credentials' }), {
      ...FORM,
      authorization: basicAuthorization('service', 'a-wrong-secret-that-must-not-be-logged'),
    });
    const output = logLines.join('');
    expect(output).toContain('"reqId"');
    expect(output).not.toContain(TEST_SECRETS.service);
    expect(output).not.toContain('a-wrong-secret-that-must-not-be-logged');
    expect(output).not.toContain(
      Buffer.from(`service:a-wrong-secret-that-must-not-be-logged`).toString('base64'),
    );
    expect(output).not.toContain('client_secret');
    expect(output).not.toContain('grant_type=client_credentials&');
  });
});
