import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_ASSERTION_TYPE,
  checkClientAssertionClaims,
  verifyClientAssertion,
} from '../src/client-assertion.js';
import { authMethodsSupportedAt, clientJwtSigningAlgs } from '../src/client-auth-methods.js';
import { authenticateClient } from '../src/client-authentication.js';
import { JWT_CLOCK_SKEW_SECONDS } from '../src/clock-skew.js';
import { OAuthError } from '../src/errors.js';
import { authorizationCodeTtlFor } from '../src/fapi2.js';
import type { Client } from '../src/model.js';
import { fapi2RegistrationProblems } from '../src/registration.js';
import { checkRequestObjectClaims, verifyRequestObject } from '../src/request-object.js';
import { createMemoryDpopReplayStore } from '../src/storage/memory-dpop-replay.js';
import { ISSUER, makeClient, secrets } from './fixtures.js';

const NOW = 1_800_000_000;
const clock = { nowSeconds: () => NOW };
const TOKEN_URL = `${ISSUER}/token`;

function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
  return 'no error';
}

describe('the table of client authentication methods', () => {
  it('offers every method at the token endpoint and none but `none` at introspection', () => {
    expect(authMethodsSupportedAt('token')).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
      'none',
    ]);
    expect(authMethodsSupportedAt('introspection')).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
    ]);
  });

  it('drops RS256 for FAPI 2.0 clients', () => {
    expect(clientJwtSigningAlgs({ profile: null })).toContain('RS256');
    expect(clientJwtSigningAlgs({ profile: 'fapi2' })).not.toContain('RS256');
    expect(clientJwtSigningAlgs({ profile: 'fapi2' })).toEqual(
      expect.arrayContaining(['ES256', 'PS256', 'EdDSA']),
    );
  });
});

describe('checkClientAssertionClaims (RFC 7523 §3)', () => {
  const valid: JWTPayload = { iss: 'c', sub: 'c', aud: ISSUER, exp: NOW + 60, jti: 'j1', iat: NOW };
  const check = (payload: JWTPayload, fapi2 = false) =>
    codeOf(() =>
      checkClientAssertionClaims(payload, {
        clientId: 'c',
        issuer: ISSUER,
        endpointUrl: TOKEN_URL,
        fapi2,
        now: NOW,
      }),
    );

  it('accepts the issuer or the endpoint URL as aud, as a string or in an array', () => {
    expect(check(valid)).toBe('no error');
    expect(check({ ...valid, aud: TOKEN_URL })).toBe('no error');
    expect(check({ ...valid, aud: ['https://x.test', ISSUER] })).toBe('no error');
  });

  it('accepts only the issuer, as a string, for FAPI 2.0 clients', () => {
    expect(check(valid, true)).toBe('no error');
    expect(check({ ...valid, aud: TOKEN_URL }, true)).toBe('invalid_client');
    expect(check({ ...valid, aud: [ISSUER] }, true)).toBe('invalid_client');
  });

  it.each([
    ['iss not the client', { iss: 'd' }],
    ['sub not the client', { sub: 'd' }],
    ['a foreign aud', { aud: 'https://x.test' }],
    ['no exp', { exp: undefined }],
    ['an expired exp', { exp: NOW - 10 }],
    ['an exp more than 5 minutes ahead', { exp: NOW + 301 + JWT_CLOCK_SKEW_SECONDS }],
    ['an nbf 11 s ahead', { nbf: NOW + JWT_CLOCK_SKEW_SECONDS + 1 }],
    ['an nbf 61 s ahead', { nbf: NOW + 61 }],
    ['an iat 11 s ahead', { iat: NOW + JWT_CLOCK_SKEW_SECONDS + 1 }],
    ['an iat 61 s ahead', { iat: NOW + 61 }],
    ['no jti', { jti: undefined }],
  ])('refuses %s', (_name, change) => {
    expect(check({ ...valid, ...change })).toBe('invalid_client');
  });

  it.each([8, 10])(
    'accepts iat and nbf %i s ahead (FAPI 2.0 SP §5.3.2.1: clock offsets up to 10 s)',
    (ahead) => {
      expect(check({ ...valid, iat: NOW + ahead, nbf: NOW + ahead }, true)).toBe('no error');
    },
  );
});

describe('verifyClientAssertion', () => {
  async function setup() {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1' };
    const client: Client = makeClient({
      clientId: 'c',
      secretHash: null,
      authMethods: ['private_key_jwt'],
      jwks: { keys: [jwk] },
    });
    const replay = createMemoryDpopReplayStore();
    const deps = {
      keys: { keysFor: () => createLocalJWKSet({ keys: [jwk] }) },
      replay,
      issuer: ISSUER,
      clock,
    };
    const sign = (claims: JWTPayload, alg = 'ES256') =>
      new SignJWT({ iss: 'c', sub: 'c', aud: ISSUER, exp: NOW + 60, jti: 'j', ...claims })
        .setProtectedHeader({ alg, kid: 'k1' })
        .sign(privateKey);
    return { client, deps, sign, replay };
  }

  it('accepts a valid assertion once, then refuses its jti', async () => {
    const { client, deps, sign } = await setup();
    const assertion = await sign({ jti: 'once' });
    await expect(verifyClientAssertion(assertion, client, TOKEN_URL, deps)).resolves.toBeUndefined();
    await expect(verifyClientAssertion(assertion, client, TOKEN_URL, deps)).rejects.toMatchObject({
      code: 'invalid_client',
    });
  });

  it('does not spend the jti when inspecting only (replay null)', async () => {
    const { client, deps, sign } = await setup();
    const assertion = await sign({ jti: 'inspect' });
    await verifyClientAssertion(assertion, client, TOKEN_URL, { ...deps, replay: null });
    await expect(verifyClientAssertion(assertion, client, TOKEN_URL, deps)).resolves.toBeUndefined();
  });

  it('is what authenticateClient uses for private_key_jwt, naming the client by iss when client_id is absent', async () => {
    const { client, deps, sign } = await setup();
    const clients = { findClient: async (id: string) => (id === 'c' ? client : null) };
    const endpointUrls = {
      token: TOKEN_URL,
      pushed_authorization: '',
      device_authorization: '',
      revocation: '',
      introspection: '',
    };
    const result = await authenticateClient(
      {
        params: {
          client_assertion_type: CLIENT_ASSERTION_TYPE,
          client_assertion: await sign({ jti: 'auth' }),
        },
      },
      { clients, secrets, assertions: { ...deps, endpointUrls } },
    );
    expect(result).toMatchObject({
      authenticated: true,
      method: 'private_key_jwt',
      client: { clientId: 'c' },
    });
  });
});

describe('FAPI 2.0 policy', () => {
  const fapiClient = (overrides: Partial<Client> = {}): Client =>
    makeClient({
      profile: 'fapi2',
      secretHash: null,
      authMethods: ['private_key_jwt'],
      jwks: { keys: [{ kty: 'EC' }] },
      requirePushedAuthorizationRequests: true,
      dpopBoundAccessTokens: true,
      idTokenSigningAlg: 'ES256',
      ...overrides,
    });

  it('caps authorization codes at 60 s for FAPI 2.0 clients only', () => {
    expect(authorizationCodeTtlFor({ profile: 'fapi2' }, 600)).toBe(60);
    expect(authorizationCodeTtlFor({ profile: 'fapi2' }, 30)).toBe(30);
    expect(authorizationCodeTtlFor({ profile: null }, 600)).toBe(600);
  });

  it('finds nothing wrong with a registration that meets the profile, and ignores other clients', () => {
    expect(fapi2RegistrationProblems(fapiClient())).toEqual([]);
    expect(fapi2RegistrationProblems(makeClient())).toEqual([]);
  });

  it.each([
    ['token_endpoint_auth_method', { authMethods: ['client_secret_basic' as const] }],
    ['client_secret', { secretHash: secrets.hash('s') }],
    ['jwks', { jwks: null, jwksUri: null }],
    ['require_pushed_authorization_requests', { requirePushedAuthorizationRequests: false }],
    ['dpop_bound_access_tokens', { dpopBoundAccessTokens: false }],
    ['id_token_signed_response_alg', { idTokenSigningAlg: 'RS256' as const }],
    ['authorization_signed_response_alg', { authorizationSignedResponseAlg: 'RS256' as const }],
  ])('names %s when it cannot meet the profile', (member, overrides) => {
    expect(fapi2RegistrationProblems(fapiClient(overrides)).map((problem) => problem.member)).toEqual([
      member,
    ]);
  });
});

describe('checkRequestObjectClaims (RFC 9101)', () => {
  const valid: JWTPayload = {
    iss: 'c',
    aud: ISSUER,
    exp: NOW + 60,
    jti: 'r1',
    client_id: 'c',
    response_type: 'code',
    max_age: 300,
    resource: ['https://api.test/a', 'https://api.test/b'],
  };
  const check = (payload: JWTPayload) =>
    checkRequestObjectClaims(payload, { clientId: 'c', issuer: ISSUER, now: NOW });

  it('returns the parameters inside, with the outer client_id and numbers as strings', () => {
    expect(check(valid).params).toEqual({
      client_id: 'c',
      response_type: 'code',
      max_age: '300',
      resource: ['https://api.test/a', 'https://api.test/b'],
    });
  });

  it.each([
    ['iss not the client', { iss: 'd' }],
    ['aud not the issuer', { aud: 'https://x.test' }],
    ['a different client_id inside', { client_id: 'd' }],
    ['no exp', { exp: undefined }],
    ['an exp too far ahead', { exp: NOW + 7200 }],
    ['an nbf 11 s ahead', { nbf: NOW + JWT_CLOCK_SKEW_SECONDS + 1 }],
    ['an empty jti', { jti: '' }],
    ['a numeric jti', { jti: 7 as unknown as string }],
    ['a nested request', { request: 'x' }],
    ['a request_uri inside', { request_uri: 'x' }],
    ['an object-valued parameter', { claims: { userinfo: {} } }],
  ])('refuses %s with invalid_request_object', (_name, change) => {
    expect(codeOf(() => check({ ...valid, ...change }))).toBe('invalid_request_object');
  });

  it('accepts an nbf 8 s ahead, as client assertions and DPoP proofs do', () => {
    expect(check({ ...valid, nbf: NOW + 8 }).jti).toBe(valid.jti);
  });

  it('accepts an object without jti (neither RFC 9101 nor FAPI 2.0 Message Signing requires one)', () => {
    const { jti, exp } = check({ ...valid, jti: undefined });
    expect([jti, exp]).toEqual([null, valid.exp]);
  });
});

describe('request objects of FAPI 2.0 clients (FAPI 2.0 Message Signing §5.3.1)', () => {
  const valid: JWTPayload = { iss: 'c', aud: ISSUER, nbf: NOW - 30, exp: NOW + 60, response_type: 'code' };
  const check = (payload: JWTPayload, profile: Client['profile'] = 'fapi2') =>
    codeOf(() => checkRequestObjectClaims(payload, { clientId: 'c', issuer: ISSUER, now: NOW, profile }));

  it('accepts nbf up to 60 minutes old with exp at most 60 minutes after it', () => {
    expect(check(valid)).toBe('no error');
    expect(check({ ...valid, nbf: NOW - 3600, exp: NOW })).toBe('no error');
    expect(check({ ...valid, nbf: NOW - 100, exp: NOW - 100 + 3600 })).toBe('no error');
  });

  it.each([
    ['no nbf', { nbf: undefined }],
    ['an nbf more than 60 minutes old', { nbf: NOW - 3601, exp: NOW + 60 }],
    ['exp more than 60 minutes after nbf', { nbf: NOW - 10, exp: NOW - 10 + 3601 }],
  ])('refuses %s with invalid_request_object', (_name, change) => {
    expect(check({ ...valid, ...change })).toBe('invalid_request_object');
  });

  it('leaves clients without the profile to RFC 9101 alone (nbf optional)', () => {
    expect(check({ ...valid, nbf: undefined }, null)).toBe('no error');
    expect(check({ ...valid, nbf: NOW - 3601 }, null)).toBe('no error');
  });
});

describe('verifyRequestObject: replay of a jti (RFC 9101 with the JWT BCP)', () => {
  async function setUp() {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), alg: 'ES256' };
    const client = makeClient({ jwks: { keys: [jwk] } });
    const deps = {
      keys: { keysFor: () => createLocalJWKSet({ keys: [jwk] }) },
      replay: createMemoryDpopReplayStore(),
      issuer: ISSUER,
      clock,
    };
    const sign = (claims: JWTPayload) =>
      new SignJWT({ iss: client.clientId, aud: ISSUER, exp: NOW + 60, response_type: 'code', ...claims })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt' })
        .sign(privateKey);
    return { client, deps, sign };
  }
  const codeOfAsync = (promise: Promise<unknown>) =>
    promise.then(
      () => 'no error',
      (error) => (error instanceof OAuthError ? error.code : Promise.reject(error)),
    );

  it('refuses a second use of the same jti', async () => {
    const { client, deps, sign } = await setUp();
    const object = await sign({ jti: 'once' });
    expect(await codeOfAsync(verifyRequestObject(object, client, deps))).toBe('no error');
    expect(await codeOfAsync(verifyRequestObject(object, client, deps))).toBe('invalid_request_object');
  });

  it('accepts objects without jti, each time', async () => {
    const { client, deps, sign } = await setUp();
    const object = await sign({});
    expect(await codeOfAsync(verifyRequestObject(object, client, deps))).toBe('no error');
    expect(await codeOfAsync(verifyRequestObject(object, client, deps))).toBe('no error');
  });
});
