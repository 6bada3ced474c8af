import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CryptoKey,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningKeys } from '../src/keys/rotation.js';
import { startTestApp, TEST_ISSUER, type TestApp, testConfig } from './helpers/app.js';
import { FetchBrowser } from './helpers/fetch-browser.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * The OpenID Foundation conformance suite's Dynamic OP plan (`oidcc-dynamic-certification-test-plan`,
 * variant: discovery, dynamic_client, private_key_jwt, response type `code`), one `it` per module
 * named as the suite names it, ported as what each module checks (not its code). The relying party
 * is openid-client v6 (RFC 7591 registration, then the code flow through the real login and
 * consent pages over HTTP); registration-endpoint refusals are plain fetch.
 *
 * Modules skipped by the suite or refused by policy are listed with the reason in
 * docs/conformance.md, "Dynamic OP".
 *
 * ISSUER stays https://issuer.example.test; every request to it is sent to the ephemeral local port.
 */

const INITIAL_ACCESS_TOKEN = 'dynamic-op-plan-initial-access-token-0123';
const REDIRECT_URI = 'https://rp.example.test/callback';

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;

/** The relying party's own `jwks_uri`, on a loopback listener the seed lists in `fetch_origins`. */
let jwksServer: Server;
let jwksOrigin: string;
let servedJwks: { keys: JWK[] } = { keys: [] };
/** Request objects by reference (RFC 9101 §5.2), served by the same listener, by path. */
const servedRequestObjects = new Map<string, string>();

const toLocal = (url: string | URL) => {
  const target = new URL(url.toString());
  if (target.origin !== TEST_ISSUER) throw new Error(`unexpected request to ${target.origin}`);
  return new URL(`${target.pathname}${target.search}`, localBase);
};
const rewritingFetch: client.CustomFetch = (url, options) => fetch(toLocal(url), options as RequestInit);

beforeAll(async () => {
  jwksServer = createServer((request, response) => {
    const requestObject = servedRequestObjects.get(request.url ?? '');
    if (requestObject !== undefined) {
      response.writeHead(200, { 'content-type': 'application/oauth-authz-req+jwt' }).end(requestObject);
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(servedJwks));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksOrigin = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  ({ app, close } = await startTestApp({
    seed: {
      ...testSeed(),
      client_registration: {
        initial_access_tokens: [INITIAL_ACCESS_TOKEN],
        scope: 'openid profile email offline_access',
        grant_types: ['authorization_code', 'refresh_token'],
        fetch_origins: [jwksOrigin],
      },
    },
    env: { REGISTRATION_RATE_LIMIT_PER_MINUTE: '1000' },
    // The suite waits 60 s before using a rotated RP key "so that any DoS limits on retrieving the
    // jwks_uri too often are not triggered"; here the re-read cooldown is simply zero.
    clientKeys: { refreshCooldownMs: 0 },
  }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await close?.();
  await new Promise((resolve) => jwksServer?.close(resolve));
});

interface RsaKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function rsaKey(kid: string): Promise<RsaKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** RFC 7591 registration by openid-client: discovery, then POST to `registration_endpoint`. */
function register(metadata: Partial<client.ClientMetadata>, authentication: client.ClientAuth) {
  return client.dynamicClientRegistration(
    new URL(TEST_ISSUER),
    { redirect_uris: [REDIRECT_URI], client_name: 'Dynamic OP plan RP', ...metadata },
    authentication,
    { initialAccessToken: INITIAL_ACCESS_TOKEN, [client.customFetch]: rewritingFetch },
  );
}

/** A private_key_jwt client with its public key registered by value (`jwks`), as the plan's default. */
async function privateKeyJwtClient(metadata: Partial<client.ClientMetadata> = {}) {
  const key = await rsaKey('rp-key-1');
  const config = await register(
    { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key.publicJwk] }, ...metadata },
    client.PrivateKeyJwt({ key: key.privateKey, kid: 'rp-key-1' }),
  );
  return { config, key };
}

/** Plain fetch to the registration endpoint, for the refusals openid-client would not send. */
async function postRegistration(body: Record<string, unknown>) {
  const response = await fetch(new URL('/register', localBase), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${INITIAL_ACCESS_TOKEN}` },
    body: JSON.stringify({ redirect_uris: [REDIRECT_URI], ...body }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function hiddenInputs(page: string): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const tag of page.match(/<input[^>]*type="hidden"[^>]*>/g) ?? []) {
    const name = /name="([^"]*)"/.exec(tag)?.[1];
    const value = (/value="([^"]*)"/.exec(tag)?.[1] ?? '')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    if (name) inputs[name] = value;
  }
  return inputs;
}

/**
 * The person's browser from the authorization URL to the redirect back to the client: the login
 * page (alice), then the consent page (approve; registered clients never skip it).
 */
async function signIn(authorizationUrl: URL): Promise<URL> {
  const browser = new FetchBrowser();
  let url = authorizationUrl;
  let response = await browser.request(toLocal(url));
  for (let step = 0; step < 10; step += 1) {
    if (response.status === 302 || response.status === 303) {
      const next = new URL(response.headers.get('location') ?? '', url);
      if (next.origin !== TEST_ISSUER) return next;
      url = next;
      response = await browser.request(toLocal(url));
      continue;
    }
    const page = await response.text();
    expect(response.status, page.slice(0, 300)).toBe(200);
    const fields: Record<string, string> = page.includes('name="password"')
      ? { username: 'alice', password: TEST_SECRETS.alicePassword }
      : { decision: 'approve' };
    response = await browser.request(toLocal(url), {
      method: 'POST',
      form: { ...hiddenInputs(page), ...fields },
    });
  }
  throw new Error('the sign-in did not come back to the client');
}

/** The code flow with PKCE, state and nonce, every check openid-client makes on the way back. */
async function codeFlow(config: client.Configuration, parameters: Record<string, string> = {}) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const authorizationUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...parameters,
  });
  const callback = await signIn(authorizationUrl);
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
}

/** An authorization request the server must refuse on its own page, never redirecting (OIDC Core §3.1.2.1). */
async function authorizeDirectly(clientId: string, redirectUri: string | undefined) {
  const params = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    scope: 'openid',
    state: 'state-1',
    nonce: 'nonce-1',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    ...(redirectUri === undefined ? {} : { redirect_uri: redirectUri }),
  });
  return fetch(new URL(`/authorize?${params}`, localBase), { redirect: 'manual' });
}

async function discoveryDocument() {
  return (await (await fetch(new URL('/.well-known/openid-configuration', localBase))).json()) as Record<
    string,
    unknown
  >;
}

async function serverJwks() {
  return (await (await fetch(new URL('/jwks', localBase))).json()) as { keys: JWK[] };
}

describe('Dynamic OP plan: ID token and redirect URI modules', () => {
  it('oidcc-idtoken-rs256', async () => {
    const { config } = await privateKeyJwtClient({ id_token_signed_response_alg: 'RS256' });

    const tokens = await codeFlow(config);

    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256');
    expect(tokens.claims()).toMatchObject({ iss: TEST_ISSUER, aud: config.clientMetadata().client_id });
  });

  it('oidcc-idtoken-unsigned', async () => {
    // The suite skips this module unless discovery lists `none` (servers need not support it);
    // here `none` is not listed, and a registration asking for it is refused rather than ignored.
    const metadata = await discoveryDocument();
    const refused = await postRegistration({ id_token_signed_response_alg: 'none' });

    expect(metadata.id_token_signing_alg_values_supported).not.toContain('none');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_client_metadata');
  });

  it('oidcc-ensure-redirect-uri-in-authorization-request', async () => {
    const { config } = await privateKeyJwtClient();

    const response = await authorizeDirectly(config.clientMetadata().client_id, undefined);

    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  it('oidcc-redirect-uri-query-ok', async () => {
    // A secret client: openid-client strips the query from the redirect_uri it redeems with, so
    // the code is redeemed by hand with the registered URI, as the suite does.
    const withQuery = `${REDIRECT_URI}?foo=bar`;
    const config = await register(
      { token_endpoint_auth_method: 'client_secret_basic', redirect_uris: [withQuery] },
      client.None(),
    );
    const { client_id: clientId, client_secret: secret } = config.clientMetadata();
    const verifier = client.randomPKCECodeVerifier();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: withQuery,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'query-ok',
    });

    const callback = await signIn(authorizationUrl);
    // OIDC Core §3.1.2.5 / RFC 6749 §3.1.2: the registered query is kept, the response added to it.
    expect(callback.searchParams.get('foo')).toBe('bar');
    expect(callback.searchParams.get('state')).toBe('query-ok');
    const response = await fetch(new URL('/token', localBase), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') ?? '',
        redirect_uri: withQuery,
        code_verifier: verifier,
      }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id_token?: string }).id_token).toEqual(expect.any(String));
  });

  it('oidcc-redirect-uri-query-mismatch', async () => {
    const { config } = await privateKeyJwtClient({ redirect_uris: [`${REDIRECT_URI}?foo=bar`] });

    const response = await authorizeDirectly(config.clientMetadata().client_id, `${REDIRECT_URI}?foo=zot`);

    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  it('oidcc-redirect-uri-query-added', async () => {
    const { config } = await privateKeyJwtClient();

    const response = await authorizeDirectly(config.clientMetadata().client_id, `${REDIRECT_URI}?foo=bar`);

    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  it('oidcc-redirect-uri-regfrag', async () => {
    const refused = await postRegistration({ redirect_uris: [`${REDIRECT_URI}#fragment`] });

    // The suite accepts invalid_request, invalid_configuration_parameter or invalid_redirect_uri.
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_redirect_uri');
  });
});

describe('Dynamic OP plan: request object module', () => {
  it('oidcc-ensure-request-object-with-redirect-uri', async () => {
    // A signed request object (RFC 9101, by value) names the registered redirect URI; the outer
    // query names another. The server must use the object's parameters only (RFC 9101 §5).
    const { config, key } = await privateKeyJwtClient();
    const clientId = config.clientMetadata().client_id;
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const requestObject = await new SignJWT({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: REDIRECT_URI,
      state: 'request-object',
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'rp-key-1', typ: 'oauth-authz-req+jwt' })
      .setIssuer(clientId)
      .setAudience(TEST_ISSUER)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key.privateKey);
    const authorizationUrl = new URL('/authorize', TEST_ISSUER);
    authorizationUrl.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'https://rp.example.test/not-registered',
      request: requestObject,
    }).toString();

    const callback = await signIn(authorizationUrl);

    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'request-object',
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.sub).toBe('u-alice');
  });
});

describe('Dynamic OP plan: request_uri modules', () => {
  /**
   * The suite registers a random `request_uris` entry at its own host, serves the request object
   * there and sends only `client_id`, `response_type`, `scope` and `request_uri` (OIDC Core §6.2).
   * Here the host is the loopback listener whose origin the seed lists in `fetch_origins`.
   */
  async function byReference(sign: (claims: Record<string, unknown>, key: RsaKey) => Promise<string>) {
    const path = `/request-uri/${client.randomState()}`;
    const requestUri = `${jwksOrigin}${path}`;
    const { config, key } = await privateKeyJwtClient({ request_uris: [requestUri] });
    const clientId = config.clientMetadata().client_id;
    expect(config.clientMetadata().request_uris).toEqual([requestUri]);
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const claims = {
      iss: clientId,
      aud: TEST_ISSUER,
      exp: Math.floor(Date.now() / 1000) + 300,
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: REDIRECT_URI,
      state: 'by-reference',
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    servedRequestObjects.set(path, await sign(claims, key));
    const authorizationUrl = new URL('/authorize', TEST_ISSUER);
    authorizationUrl.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      request_uri: requestUri,
    }).toString();
    return { config, authorizationUrl, verifier, nonce };
  }

  it('oidcc-request-uri-signed-rs256', async () => {
    // The suite's first check (OIDC Discovery §3): request_uri support is announced.
    expect(await discoveryDocument()).toMatchObject({ request_uri_parameter_supported: true });
    const { config, authorizationUrl, verifier, nonce } = await byReference((claims, key) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'rp-key-1', typ: 'oauth-authz-req+jwt' })
        .sign(key.privateKey),
    );

    const callback = await signIn(authorizationUrl);

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'by-reference',
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.sub).toBe('u-alice');
  });

  it('oidcc-request-uri-unsigned', async () => {
    // OIDC Core §6.2, §15.2: request_uri is mandatory for dynamic OPs, and its object may be
    // unsigned; it is accepted by reference only (oauth-core request-object.ts), and the flow completes.
    const { config, authorizationUrl, verifier, nonce } = await byReference(async (claims) =>
      new UnsecuredJWT(claims).encode(),
    );

    const callback = await signIn(authorizationUrl);

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'by-reference',
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.sub).toBe('u-alice');
  });
});

describe('Dynamic OP plan: discovery', () => {
  it('oidcc-discovery-endpoint-verification', async () => {
    const metadata = await discoveryDocument();
    const endpoints = [
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
      'registration_endpoint',
    ];

    expect(metadata.issuer).toBe(TEST_ISSUER);
    for (const endpoint of endpoints) {
      expect(metadata[endpoint], endpoint).toEqual(expect.stringMatching(/^https:\/\//));
    }
    expect(metadata.scopes_supported).toContain('openid');
    expect(metadata.response_types_supported).toContain('code');
    expect(metadata.subject_types_supported).toEqual(expect.arrayContaining(['public']));
    expect(metadata.id_token_signing_alg_values_supported).toContain('RS256');
    // OP-Discovery-JWKs: keys with distinct kids, public parts only.
    const { keys } = await serverJwks();
    const kids = keys.map((key) => key.kid);
    expect(kids.every((kid) => typeof kid === 'string')).toBe(true);
    expect(new Set(kids).size).toBe(kids.length);
    for (const key of keys) expect(key).not.toHaveProperty('d');
  });
});

describe('Dynamic OP plan: registration modules', () => {
  it('oidcc-server', async () => {
    const { config } = await privateKeyJwtClient();

    const tokens = await codeFlow(config);
    const userInfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);

    expect(config.clientMetadata().client_id).toMatch(/^dyn_/);
    expect(userInfo).toMatchObject({ sub: 'u-alice', name: 'Alice Example' });
  });

  it('oidcc-userinfo-rs256', async () => {
    // The suite needs RS256 in discovery, registers userinfo_signed_response_alg RS256 and checks
    // that UserInfo is an application/jwt signed with the OP's RS256 key, with `iss` and `aud`.
    const metadata = await discoveryDocument();
    const { config } = await privateKeyJwtClient({ userinfo_signed_response_alg: 'RS256' });
    // openid-client verifies a JWT UserInfo signature against the OP's JWKS only with this on;
    // without it, it still refuses plain JSON and checks `alg`, `iss` and `aud`.
    client.enableNonRepudiationChecks(config);

    const tokens = await codeFlow(config);
    const userInfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);

    expect(metadata.userinfo_signing_alg_values_supported).toContain('RS256');
    expect(config.clientMetadata().userinfo_signed_response_alg).toBe('RS256');
    expect(userInfo).toMatchObject({
      sub: 'u-alice',
      name: 'Alice Example',
      iss: TEST_ISSUER,
      aud: config.clientMetadata().client_id,
    });
  });

  for (const [module, member] of [
    ['oidcc-registration-logo-uri', 'logo_uri'],
    ['oidcc-registration-policy-uri', 'policy_uri'],
    ['oidcc-registration-tos-uri', 'tos_uri'],
  ] as const) {
    it(module, async () => {
      const value = `https://rp.example.test/${member}`;
      const { config } = await privateKeyJwtClient({ [member]: value });

      const tokens = await codeFlow(config);

      expect(config.clientMetadata()[member]).toBe(value);
      expect(tokens.claims()?.sub).toBe('u-alice');
    });
  }

  it('oidcc-registration-jwks-uri', async () => {
    const key = await rsaKey('rp-jwks-uri-key');
    servedJwks = { keys: [key.publicJwk] };
    const config = await register(
      { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${jwksOrigin}/jwks.json` },
      client.PrivateKeyJwt({ key: key.privateKey, kid: 'rp-jwks-uri-key' }),
    );

    const tokens = await codeFlow(config);

    expect(tokens.claims()?.sub).toBe('u-alice');
  });

  it('oidcc-registration-sector-uri', async () => {
    // The suite skips this module unless discovery lists `pairwise`: this server offers public
    // subject identifiers only, so a pairwise registration is refused, not silently made public.
    const metadata = await discoveryDocument();
    const refused = await postRegistration({
      subject_type: 'pairwise',
      sector_identifier_uri: `${jwksOrigin}/redirect_uris.json`,
    });

    expect(metadata.subject_types_supported).toEqual(['public']);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_client_metadata');
  });

  it('oidcc-registration-sector-bad', async () => {
    // What the module requires of a server that does run it: 400 invalid_client_metadata.
    const refused = await postRegistration({
      subject_type: 'pairwise',
      sector_identifier_uri: `${jwksOrigin}/not-listing-the-redirect-uris.json`,
    });

    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_client_metadata');
  });
});

describe('Dynamic OP plan: refresh and client assertion modules', () => {
  it('oidcc-refresh-token', async () => {
    const { config } = await privateKeyJwtClient({ grant_types: ['authorization_code', 'refresh_token'] });
    const tokens = await codeFlow(config, { scope: 'openid offline_access', prompt: 'consent' });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);

    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.claims()?.sub).toBe(tokens.claims()?.sub);
    expect(refreshed.claims()?.aud).toBe(config.clientMetadata().client_id);
  });

  it('oidcc-refresh-token-rp-key-rotation', async () => {
    const first = await rsaKey('rp-rotation-1');
    servedJwks = { keys: [first.publicJwk] };
    const config = await register(
      {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: `${jwksOrigin}/jwks.json`,
        grant_types: ['authorization_code', 'refresh_token'],
      },
      client.PrivateKeyJwt({ key: first.privateKey, kid: 'rp-rotation-1' }),
    );
    const tokens = await codeFlow(config, { scope: 'openid offline_access', prompt: 'consent' });

    // The RP rotates: a new key with a new kid replaces the old one at its jwks_uri.
    const second = await rsaKey('rp-rotation-2');
    servedJwks = { keys: [second.publicJwk] };
    const rotated = new client.Configuration(
      config.serverMetadata(),
      config.clientMetadata().client_id,
      config.clientMetadata(),
      client.PrivateKeyJwt({ key: second.privateKey, kid: 'rp-rotation-2' }),
    );
    rotated[client.customFetch] = rewritingFetch;
    const refreshed = await client.refreshTokenGrant(rotated, tokens.refresh_token!);

    expect(refreshed.claims()?.sub).toBe('u-alice');
  });

  it('oidcc-ensure-client-assertion-with-iss-aud-succeeds', async () => {
    // The module sends a client assertion whose `aud` is the issuer identifier (RFC 7523 §3, OIDC
    // Core §9); the server should accept it.
    const { config, key } = await privateKeyJwtClient();
    let audience: unknown;
    const assertingClient = new client.Configuration(
      config.serverMetadata(),
      config.clientMetadata().client_id,
      config.clientMetadata(),
      client.PrivateKeyJwt(
        { key: key.privateKey, kid: 'rp-key-1' },
        {
          [client.modifyAssertion]: (_header, payload) => {
            payload.aud = TEST_ISSUER;
            audience = payload.aud;
          },
        },
      ),
    );
    assertingClient[client.customFetch] = rewritingFetch;

    const tokens = await codeFlow(assertingClient);

    expect(audience).toBe(TEST_ISSUER);
    expect(tokens.claims()?.sub).toBe('u-alice');
  });
});

describe('Dynamic OP plan: OP key rotation', () => {
  it('oidcc-server-rotate-keys', async () => {
    const before = (await serverJwks()).keys.map((key) => key.kid);

    await rotateSigningKeys(app.database.db, testConfig().keyEncryptionKey, defaultClock, {
      activateInSeconds: 0,
      keepPublishedSeconds: 3600,
    });
    await app.keyRing.reloadKeys();
    const after = (await serverJwks()).keys;

    // A new signing key is published, and the old ones still are (tokens they signed stay valid).
    const afterKids = after.map((key) => key.kid);
    expect(afterKids.filter((kid) => !before.includes(kid)).length).toBeGreaterThan(0);
    expect(afterKids).toEqual(expect.arrayContaining(before));
    expect(new Set(afterKids).size).toBe(afterKids.length);
    for (const key of after) expect(key).not.toHaveProperty('d');
    // And the next ID token is signed with the new key, verified through the published set.
    const { config } = await privateKeyJwtClient();
    const tokens = await codeFlow(config);
    expect(before).not.toContain(decodeProtectedHeader(tokens.id_token!).kid);
  });
});

const defaultClock = { nowSeconds: () => Math.floor(Date.now() / 1000) };
