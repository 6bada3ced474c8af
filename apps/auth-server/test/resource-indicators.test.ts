import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { pkcePair } from './helpers/flows.js';
import { ORDERS_API, REPORTS_API, TEST_SECRETS, WEB_REDIRECT_URI } from './helpers/seed.js';

/** RFC 8707 end to end: `resource` at /authorize, at the code exchange and at each refresh. */

let app: TestApp;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

const web = basicAuthorization('web', TEST_SECRETS.web);

function authorizePath(challenge: string, resources: string[]) {
  const query = new URLSearchParams({
    client_id: 'web',
    redirect_uri: WEB_REDIRECT_URI,
    response_type: 'code',
    scope: 'openid offline_access orders.read reports.read',
    state: 'r-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  for (const resource of resources) query.append('resource', resource);
  return `/authorize?${query}`;
}

async function codeFor(resources: string[]) {
  const { verifier, challenge } = pkcePair();
  const browser = new TestBrowser(app);
  const login = await browser.follow(await browser.get(authorizePath(challenge, resources)));
  const callback = await browser.post(browser.lastUrl, {
    ...hiddenFields(login.body),
    username: 'alice',
    password: TEST_SECRETS.alicePassword,
  });
  return { code: locationOf(callback).searchParams.get('code')!, verifier };
}

function token(params: Record<string, string | string[]>) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: web },
    payload: form(params),
  });
}

async function introspectedAudience(accessToken: string, resource: string, secret: string) {
  const response = await app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization: basicAuthorization(resource, secret) },
    payload: form({ token: accessToken }),
  });
  return response.json();
}

describe('resource indicators', () => {
  it('binds two resources at /authorize and issues one token per resource at the token endpoint', async () => {
    const { code, verifier } = await codeFor([ORDERS_API, REPORTS_API]);
    const exchanged = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
      resource: REPORTS_API,
    });
    expect(exchanged.statusCode).toBe(200);
    // The response lists the whole grant (RFC 6749 §5.1); the token carries reports-api's part.
    expect(exchanged.json().scope).toBe('openid offline_access orders.read reports.read');
    // reports-api tokens are opaque; its introspection sees it as addressed to itself.
    expect(
      await introspectedAudience(exchanged.json().access_token, REPORTS_API, TEST_SECRETS.reportsApi),
    ).toMatchObject({
      active: true,
      aud: REPORTS_API,
    });

    const orders = await token({
      grant_type: 'refresh_token',
      refresh_token: exchanged.json().refresh_token,
      resource: ORDERS_API,
    });
    expect(decodeJwt(orders.json().access_token)).toMatchObject({
      aud: ORDERS_API,
      scope: 'openid orders.read',
    });
    // The orders token is not addressed to reports-api.
    expect(
      await introspectedAudience(orders.json().access_token, REPORTS_API, TEST_SECRETS.reportsApi),
    ).toEqual({
      active: false,
    });

    const twoAtOnce = await token({
      grant_type: 'refresh_token',
      refresh_token: orders.json().refresh_token,
      resource: [ORDERS_API, REPORTS_API],
    });
    expect(twoAtOnce.statusCode).toBe(400);
    expect(twoAtOnce.json().error).toBe('invalid_target');
  });

  it('refuses at the token endpoint a resource the authorization request did not name', async () => {
    const { code, verifier } = await codeFor([ORDERS_API]);
    const response = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
      resource: REPORTS_API,
    });
    expect(response.json().error).toBe('invalid_target');
  });

  it('sends an unknown resource at /authorize back to the client as invalid_target', async () => {
    const response = await new TestBrowser(app).get(
      authorizePath(pkcePair().challenge, ['https://unknown.example.test']),
    );
    const location = locationOf(response);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('state')).toBe('r-state');
  });

  it('targets client_credentials tokens with the resource parameter', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
      payload: form({ grant_type: 'client_credentials', scope: 'orders.read', resource: ORDERS_API }),
    });
    expect(decodeJwt(response.json().access_token).aud).toBe(ORDERS_API);
    const unknown = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
      payload: form({
        grant_type: 'client_credentials',
        scope: 'orders.read',
        resource: 'https://unknown.example.test',
      }),
    });
    expect(unknown.json().error).toBe('invalid_target');
  });

  // RFC 8707 §2: a resource not bound at /authorize must own a granted scope;
  // never an access token for an API with an empty scope.
  it('refuses a code exchange naming an API the grant holds no scope of (scope=openid)', async () => {
    const { verifier, challenge } = pkcePair();
    const browser = new TestBrowser(app);
    const query = new URLSearchParams({
      client_id: 'web',
      redirect_uri: WEB_REDIRECT_URI,
      response_type: 'code',
      scope: 'openid',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const login = await browser.follow(await browser.get(`/authorize?${query}`));
    const callback = await browser.post(browser.lastUrl, {
      ...hiddenFields(login.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    });
    const code = locationOf(callback).searchParams.get('code')!;
    const response = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
      resource: REPORTS_API,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_target');
  });

  it("refuses client_credentials with one API's scope and another API as resource", async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
      payload: form({ grant_type: 'client_credentials', scope: 'orders.read', resource: REPORTS_API }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_target');
    expect(response.json()).not.toHaveProperty('access_token');
  });

  it('refuses a refresh naming an API the grant holds no scope of', async () => {
    const { code, verifier } = await codeFor([]);
    const first = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(first.statusCode).toBe(200);
    const narrowed = await token({
      grant_type: 'refresh_token',
      refresh_token: first.json().refresh_token,
      scope: 'openid offline_access orders.read',
      resource: REPORTS_API,
    });
    expect(narrowed.statusCode).toBe(400);
    expect(narrowed.json().error).toBe('invalid_target');
  });
});
