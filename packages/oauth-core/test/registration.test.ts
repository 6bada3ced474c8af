import { describe, expect, it } from 'vitest';
import { clientAuthMethods } from '../src/client-auth-methods.js';
import { clientCredentialsGrant, createGrantRegistry } from '../src/grants/index.js';
import type { Client } from '../src/model.js';
import {
  type ClientMetadata,
  clientDefaults,
  clientRegistrationProblems,
  FORBIDDEN_GRANT_TYPES,
  forbiddenGrantReason,
} from '../src/registration.js';
import { secrets } from './fixtures.js';

/**
 * Client registration (registration.ts): the defaults a client's metadata takes, and the problems
 * that refuse it. The seed loader reads both; these tables are their specification.
 */

const LIFETIMES = { refreshTokenAbsoluteTtl: 2_592_000, refreshTokenSlidingTtl: 1_209_600 };
const SECRET = secrets.hash('s');
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const PUBLIC_KEY = {
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
};

const register = (metadata: Partial<ClientMetadata>, secretHash: string | null = null): Client =>
  clientDefaults({ client_id: 'c', ...metadata }, { secretHash, lifetimes: LIFETIMES });

describe('clientDefaults', () => {
  it('fills every member the metadata leaves out', () => {
    expect(register({})).toEqual({
      clientId: 'c',
      clientName: 'c',
      secretHash: null,
      redirectUris: [],
      postLogoutRedirectUris: [],
      grantTypes: ['authorization_code'],
      scopes: ['openid'],
      skipConsent: false,
      allowedCorsOrigins: [],
      backchannelLogoutUri: null,
      frontchannelLogoutUri: null,
      refreshTokensWithoutOfflineAccess: false,
      refreshTokenAbsoluteTtl: LIFETIMES.refreshTokenAbsoluteTtl,
      refreshTokenSlidingTtl: LIFETIMES.refreshTokenSlidingTtl,
      dpopNonceRequired: false,
      tokenExchange: null,
      keepOfflineAccessOnLogout: false,
      requireMfa: false,
      refreshTokenReuseInterval: 0,
      userinfoSignedResponseAlg: null,
      authMethods: ['none'],
      jwks: null,
      jwksUri: null,
      requestUris: [],
      requireSignedRequestObject: false,
      profile: null,
      dpopBoundAccessTokens: false,
      requirePushedAuthorizationRequests: false,
      idTokenSigningAlg: 'RS256',
      authorizationSignedResponseAlg: 'RS256',
      requireSignedAuthorizationResponse: false,
    } satisfies Client);
  });

  it.each<[string, Partial<ClientMetadata>, string | null, Partial<Client>]>([
    [
      'a secret: Basic and the body',
      {},
      SECRET,
      { authMethods: ['client_secret_basic', 'client_secret_post'] },
    ],
    ['no secret: none (a public client)', {}, null, { authMethods: ['none'] }],
    [
      'a method given: that one only',
      { token_endpoint_auth_method: 'client_secret_post' },
      SECRET,
      { authMethods: ['client_secret_post'] },
    ],
    [
      'fapi2: private_key_jwt, DPoP, PAR, ES256',
      { profile: 'fapi2' },
      null,
      {
        authMethods: ['private_key_jwt'],
        profile: 'fapi2',
        dpopBoundAccessTokens: true,
        requirePushedAuthorizationRequests: true,
        idTokenSigningAlg: 'ES256',
        authorizationSignedResponseAlg: 'ES256',
        requireSignedAuthorizationResponse: false,
      },
    ],
    [
      'fapi2 with signed request objects (Message Signing): signed responses too',
      { profile: 'fapi2', require_signed_request_object: true },
      null,
      { requireSignedAuthorizationResponse: true },
    ],
    [
      'fapi2 Message Signing as the metadata says',
      { profile: 'fapi2', require_signed_request_object: true, require_signed_authorization_response: false },
      null,
      { requireSignedAuthorizationResponse: false },
    ],
    [
      'signed responses asked for by any client, in its algorithm',
      { require_signed_authorization_response: true, authorization_signed_response_alg: 'ES256' },
      SECRET,
      { requireSignedAuthorizationResponse: true, authorizationSignedResponseAlg: 'ES256' },
    ],
    [
      'fapi2 as the metadata says',
      { profile: 'fapi2', dpop_bound_access_tokens: false },
      null,
      { dpopBoundAccessTokens: false },
    ],
    ['the scope split on spaces', { scope: 'openid  profile ' }, null, { scopes: ['openid', 'profile'] }],
    ['its own name', { client_name: 'Orders' }, null, { clientName: 'Orders' }],
    [
      'its own lifetimes',
      { refresh_token_absolute_ttl: 60, refresh_token_sliding_ttl: 30 },
      null,
      { refreshTokenAbsoluteTtl: 60, refreshTokenSlidingTtl: 30 },
    ],
    [
      'a token exchange policy: access tokens only unless it names more',
      { token_exchange: { audiences: ['api'], scopes: ['read'] } },
      SECRET,
      {
        tokenExchange: {
          audiences: ['api'],
          scopes: ['read'],
          subjectTokenTypes: ['urn:ietf:params:oauth:token-type:access_token'],
        },
      },
    ],
    ['its keys', { jwks: { keys: [PUBLIC_KEY] } }, null, { jwks: { keys: [PUBLIC_KEY] } }],
  ])('%s', (_name, metadata, secretHash, expected) => {
    expect(register(metadata, secretHash)).toMatchObject(expected);
  });

  it('writes the default method rule once: a record without methods reads the same rule', () => {
    for (const secretHash of [SECRET, null]) {
      const { authMethods, ...legacy } = register({}, secretHash);
      expect(clientAuthMethods(legacy)).toEqual(authMethods);
    }
  });
});

describe('clientRegistrationProblems', () => {
  it.each<[string, Partial<ClientMetadata>, string | null]>([
    [
      'a confidential web client',
      { grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['https://app/cb'] },
      SECRET,
    ],
    [
      'a public client with PKCE',
      { redirect_uris: ['http://127.0.0.1/cb'], allowed_cors_origins: ['https://spa.example'] },
      null,
    ],
    ['a service client', { grant_types: ['client_credentials'] }, SECRET],
    ['a device client', { grant_types: [DEVICE] }, null],
    [
      'a private_key_jwt client',
      {
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'https://app/jwks',
      },
      null,
    ],
    [
      'a FAPI 2.0 client',
      { profile: 'fapi2', redirect_uris: ['https://bank/cb'], jwks: { keys: [PUBLIC_KEY] } },
      null,
    ],
    [
      'a token-exchange client',
      { grant_types: [EXCHANGE], token_exchange: { audiences: ['api'], scopes: ['read'] } },
      SECRET,
    ],
    [
      'a client with the longest refresh-token reuse interval',
      { redirect_uris: ['https://app/cb'], refresh_token_reuse_interval: 60 },
      null,
    ],
    [
      'a client with no refresh-token reuse interval',
      { redirect_uris: ['https://app/cb'], refresh_token_reuse_interval: 0 },
      null,
    ],
  ])('finds nothing wrong with %s', (_name, metadata, secretHash) => {
    expect(clientRegistrationProblems(register(metadata, secretHash))).toEqual([]);
  });

  const web = { redirect_uris: ['https://app/cb'] };
  it.each<[Partial<ClientMetadata>, string | null, string | undefined, RegExp]>([
    [
      { ...web, jwks: { keys: [PUBLIC_KEY] }, jwks_uri: 'https://app/jwks' },
      null,
      'jwks',
      /jwks or jwks_uri, not both/,
    ],
    [{ ...web, jwks: { keys: [{ ...PUBLIC_KEY, d: 'x' }] } }, null, 'jwks.keys[0]', /private key material/],
    [
      { ...web, jwks: { keys: [{ kty: 'oct', k: 'x' }] } },
      null,
      'jwks.keys[0]',
      /kty must be RSA, EC or OKP/,
    ],
    [
      { ...web, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'app/jwks' },
      null,
      'jwks_uri',
      /not an absolute URI/,
    ],
    [
      { ...web, token_endpoint_auth_method: 'client_secret_basic' },
      null,
      'token_endpoint_auth_method',
      /needs a client_secret/,
    ],
    [
      { ...web, token_endpoint_auth_method: 'none' },
      SECRET,
      'client_secret',
      /not used with token_endpoint_auth_method none/,
    ],
    [{ ...web, token_endpoint_auth_method: 'private_key_jwt' }, null, 'jwks', /required for private_key_jwt/],
    [{ ...web, require_signed_request_object: true }, null, 'jwks', /signed request objects/],
    [
      { ...web, profile: 'fapi2', jwks: { keys: [PUBLIC_KEY] }, id_token_signed_response_alg: 'RS256' },
      null,
      'id_token_signed_response_alg',
      /\(profile fapi2\)$/,
    ],
    [
      { ...web, profile: 'fapi2', jwks: { keys: [PUBLIC_KEY] }, grant_types: [DEVICE] },
      null,
      'grant_types',
      /outside the FAPI 2.0 profile/,
    ],
    [
      { grant_types: ['client_credentials'] },
      null,
      undefined,
      /client_credentials requires a client that authenticates/,
    ],
    [{ grant_types: ['authorization_code'] }, null, undefined, /redirect_uris is required/],
    [
      { redirect_uris: ['https://app/cb#top'] },
      null,
      'redirect_uris',
      /not an absolute URI without a fragment/,
    ],
    [{ ...web, post_logout_redirect_uris: ['/'] }, null, 'post_logout_redirect_uris', /not an absolute URI/],
    [{ ...web, backchannel_logout_uri: 'logout' }, null, 'backchannel_logout_uri', /not an absolute URI/],
    [
      { ...web, frontchannel_logout_uri: 'https://app/#x' },
      null,
      'frontchannel_logout_uri',
      /not an absolute URI/,
    ],
    [{ grant_types: [EXCHANGE] }, SECRET, undefined, /needs a token_exchange policy/],
    [
      { grant_types: ['client_credentials'], token_exchange: { audiences: [], scopes: [] } },
      SECRET,
      undefined,
      /lacks the token-exchange grant/,
    ],
    [
      { grant_types: [EXCHANGE], token_exchange: { audiences: [], scopes: [] } },
      null,
      undefined,
      /token exchange requires a client that authenticates/,
    ],
    [
      { ...web, allowed_cors_origins: ['https://spa.example/app'] },
      null,
      'allowed_cors_origins',
      /is not an origin/,
    ],
    [{ ...web, refresh_token_reuse_interval: 61 }, null, 'refresh_token_reuse_interval', /from 0 to 60/],
    [{ ...web, refresh_token_reuse_interval: -1 }, null, 'refresh_token_reuse_interval', /from 0 to 60/],
    [{ ...web, refresh_token_reuse_interval: 1.5 }, null, 'refresh_token_reuse_interval', /whole number/],
  ])('refuses %j (secret %s): %s', (metadata, secretHash, member, problem) => {
    const problems = clientRegistrationProblems(register(metadata, secretHash));
    expect(problems).toHaveLength(1);
    expect(problems[0]?.member).toBe(member);
    expect(problems[0]?.problem).toMatch(problem);
  });

  it('lists every problem, those of the keys and the profile first', () => {
    const problems = clientRegistrationProblems(
      register({
        profile: 'fapi2',
        grant_types: ['authorization_code', DEVICE],
        allowed_cors_origins: ['x'],
      }),
    );
    expect(problems.map((found) => found.member)).toEqual([
      'jwks',
      'jwks',
      'grant_types',
      undefined,
      'allowed_cors_origins',
    ]);
  });
});

describe('forbidden grant types (RFC 9700)', () => {
  it.each(Object.keys(FORBIDDEN_GRANT_TYPES))(
    'refuses %s with its reason, and the registry never holds it',
    (grantType) => {
      expect(forbiddenGrantReason(grantType)).toMatch(/RFC 9700 §2\.(4|1\.2)/);
      expect(() => createGrantRegistry([{ ...clientCredentialsGrant, grantType } as never])).toThrow(
        `grant type ${grantType} must never be registered`,
      );
    },
  );

  it('knows nothing else as forbidden, not even inherited names', () => {
    expect(forbiddenGrantReason('client_credentials')).toBeUndefined();
    expect(forbiddenGrantReason('constructor')).toBeUndefined();
  });
});
