import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedClient } from '../src/schemas/seed.js';
import { startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { type ClientKey, clientKey, signRequestObject } from './helpers/client-keys.js';
import { testSeed } from './helpers/seed.js';

/**
 * `request_uri` by reference (RFC 9101 §5.2, OIDC Core §6.2) at /authorize: the client's request
 * object served by a real loopback listener, fetched by the server through the guarded fetch.
 */

const REDIRECT_URI = 'https://ro.example.test/cb';
const INITIAL_ACCESS_TOKEN = 'request-uri-initial-access-token-0123456';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

let app: TestApp;
let close: () => Promise<void>;
let objects: Server;
let origin: string;
let goneOrigin: string;
let rsaKey: ClientKey;
let bankKey: ClientKey;
/** What the listener serves, by path. */
const served = new Map<string, string>();

const authorizationParams = (clientId: string) => ({
  client_id: clientId,
  response_type: 'code',
  scope: 'openid',
  redirect_uri: REDIRECT_URI,
  state: 'by-reference',
  nonce: 'nonce-1',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
});

function seedClient(clientId: string, key: ClientKey, extra: Partial<SeedClient> = {}): SeedClient {
  return {
    client_id: clientId,
    jwks: { keys: [key.publicJwk] },
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code'],
    scope: 'openid',
    skip_consent: true,
    ...extra,
  };
}

async function unusedOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  objects = createServer((request, response) => {
    const body = served.get(request.url ?? '');
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'application/oauth-authz-req+jwt' }).end(body);
  });
  await new Promise<void>((resolve) => objects.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(objects.address() as AddressInfo).port}`;
  goneOrigin = await unusedOrigin();
  [rsaKey, bankKey] = await Promise.all([clientKey('RS256'), clientKey('ES256')]);
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    seedClient('ro', rsaKey, {
      request_uris: [
        `${origin}/signed.jwt`,
        `${origin}/unsigned.jwt`,
        `${origin}/big.jwt`,
        `${origin}/garbage.jwt`,
        `${goneOrigin}/gone.jwt`,
      ],
    }),
    seedClient('bank', bankKey, { profile: 'fapi2', request_uris: [`${origin}/bank.jwt`] }),
    seedClient('strict', rsaKey, {
      require_signed_request_object: true,
      request_uris: [`${origin}/strict-unsigned.jwt`],
    }),
  ];
  // Registered clients get no trusted origins: the listener's loopback address is refused for them.
  seed.client_registration = { initial_access_tokens: [INITIAL_ACCESS_TOKEN], scope: 'openid' };
  ({ app, close } = await startTestApp({ seed }));
});
afterAll(async () => {
  await close?.();
  await new Promise((resolve) => objects?.close(resolve));
});

function authorize(clientId: string, requestUri: string) {
  const query = new URLSearchParams({ client_id: clientId, request_uri: requestUri });
  return app.inject({ method: 'GET', url: `/authorize?${query}` });
}

/** Refused on the server's own page, never redirected: the redirect URI is inside the object. */
async function refusal(clientId: string, requestUri: string) {
  const response = await authorize(clientId, requestUri);
  expect(response.statusCode).toBe(400);
  expect(response.headers.location).toBeUndefined();
  return response.body;
}

describe('/authorize with request_uri by reference (RFC 9101 §5.2)', () => {
  it('takes the parameters of an RS256-signed object at a registered URL (fragment ignored)', async () => {
    served.set('/signed.jwt', await signRequestObject('ro', rsaKey, authorizationParams('ro')));
    const response = await authorize('ro', `${origin}/signed.jwt#v1`);
    // No session yet: on to the login page, which only a valid request reaches.
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toContain('/interaction/');
  });

  /** An unsigned (`alg: none`) request object with `authorizationParams(clientId)`. */
  const unsignedObject = (clientId: string) =>
    new UnsecuredJWT({ ...authorizationParams(clientId), iss: clientId, aud: TEST_ISSUER })
      .setExpirationTime(Math.floor(Date.now() / 1000) + 60)
      .encode();

  it('takes an unsigned (alg none) object at a registered URL from a plain client (OIDC Core §6.2)', async () => {
    served.set('/unsigned.jwt', unsignedObject('ro'));
    const response = await authorize('ro', `${origin}/unsigned.jwt`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toContain('/interaction/');
  });

  it('refuses an unsigned object from a require_signed_request_object client, and any by value', async () => {
    served.set('/strict-unsigned.jwt', unsignedObject('strict'));
    expect(await refusal('strict', `${origin}/strict-unsigned.jwt`)).toContain('invalid_request_object');
    const byValue = new URLSearchParams({ client_id: 'ro', request: unsignedObject('ro') });
    const response = await app.inject({ method: 'GET', url: `/authorize?${byValue}` });
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.body).toContain('invalid_request_object');
  });

  it('refuses content that is no request object with invalid_request_object', async () => {
    served.set('/garbage.jwt', 'not a JWT');
    expect(await refusal('ro', `${origin}/garbage.jwt`)).toContain('invalid_request_object');
  });

  it('refuses an unregistered URL without fetching it', async () => {
    served.set('/other.jwt', await signRequestObject('ro', rsaKey, authorizationParams('ro')));
    expect(await refusal('ro', `${origin}/other.jwt`)).toContain('invalid_request_uri');
  });

  it('refuses an unreachable URL and an oversized object with invalid_request_uri', async () => {
    expect(await refusal('ro', `${goneOrigin}/gone.jwt`)).toContain('invalid_request_uri');
    served.set('/big.jwt', 'a'.repeat(40 * 1024));
    expect(await refusal('ro', `${origin}/big.jwt`)).toContain('invalid_request_uri');
  });

  it('refuses a registered client’s loopback URL whose origin fetch_origins does not list', async () => {
    const registered = await app.inject({
      method: 'POST',
      url: '/register',
      headers: { authorization: `Bearer ${INITIAL_ACCESS_TOKEN}`, 'content-type': 'application/json' },
      payload: {
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [rsaKey.publicJwk] },
        request_uris: [`${origin}/registered.jwt`],
      },
    });
    expect(registered.statusCode).toBe(201);
    const clientId = registered.json().client_id as string;
    expect(registered.json().request_uris).toEqual([`${origin}/registered.jwt`]);
    served.set('/registered.jwt', await signRequestObject(clientId, rsaKey, authorizationParams(clientId)));
    expect(await refusal(clientId, `${origin}/registered.jwt`)).toContain('invalid_request_uri');
  });

  it('refuses any URL for a FAPI 2.0 client (PAR only), and keeps PAR references as they were', async () => {
    served.set('/bank.jwt', await signRequestObject('bank', bankKey, authorizationParams('bank')));
    expect(await refusal('bank', `${origin}/bank.jwt`)).toContain('invalid_request_uri');
    expect(await refusal('ro', 'urn:ietf:params:oauth:request_uri:unknown')).toContain('invalid_request_uri');
  });

  it('is announced in discovery, with registration required', async () => {
    const discovery = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(discovery).toMatchObject({
      request_uri_parameter_supported: true,
      require_request_uri_registration: true,
    });
  });
});
