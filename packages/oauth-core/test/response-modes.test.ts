import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthorizationRequestError, validateAuthorizationRequest } from '../src/authorization.js';
import {
  AUTHORIZATION_RESPONSE_JWT_TTL_SECONDS,
  decideResponseMode,
  RESPONSE_MODES_SUPPORTED,
  responseModeRule,
  signAuthorizationResponse,
} from '../src/response-modes.js';
import { createTestClock, createTestKeys } from '../src/testing.js';
import { ISSUER } from './fixtures.js';
import { CHALLENGE, createEnv } from './harness.js';

const plain = { requireSignedAuthorizationResponse: false };
const jarmOnly = { requireSignedAuthorizationResponse: true };

describe('the table of response modes (OAuth 2.0 Multiple Response Types, Form Post, JARM)', () => {
  it('offers query, form_post and the JARM modes, never a fragment', () => {
    expect(RESPONSE_MODES_SUPPORTED).toEqual(['query', 'form_post', 'jwt', 'query.jwt', 'form_post.jwt']);
  });

  it.each([
    ['query', 'query', false],
    ['form_post', 'form_post', false],
    // JARM "Response Mode jwt": the response type's default transport, the query for code.
    ['jwt', 'query', true],
    ['query.jwt', 'query', true],
    ['form_post.jwt', 'form_post', true],
  ] as const)('%s travels by %s, signed: %s', (mode, delivery, signed) => {
    expect(responseModeRule(mode)).toEqual({ delivery, signed });
  });
});

describe('decideResponseMode', () => {
  it.each([
    [undefined, plain, 'query', null],
    ['form_post.jwt', plain, 'form_post.jwt', null],
    ['jwt', plain, 'jwt', null],
    // Not offered: refused, and the error travels by the query, signed when a JWT mode was asked for.
    ['fragment.jwt', plain, 'query.jwt', 'unsupported response_mode'],
    ['fragment', plain, 'query', 'unsupported response_mode'],
    ['constructor', plain, 'query', 'unsupported response_mode'],
    // A client that must receive signed responses: signed by default, and refused a plain mode.
    [undefined, jarmOnly, 'query.jwt', null],
    ['jwt', jarmOnly, 'jwt', null],
    ['query', jarmOnly, 'query.jwt', 'this client must use a JWT response mode (JARM)'],
    ['form_post', jarmOnly, 'form_post.jwt', 'this client must use a JWT response mode (JARM)'],
    ['fragment', jarmOnly, 'query.jwt', 'unsupported response_mode'],
  ] as const)('%s for %o → %s (problem: %s)', (requested, client, mode, problem) => {
    expect(decideResponseMode(requested, client)).toEqual({ mode, problem });
  });
});

describe('validateAuthorizationRequest with JARM modes', () => {
  const valid = {
    client_id: 'web',
    redirect_uri: 'https://app.example.test/cb',
    response_type: 'code',
    scope: 'openid',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 's',
  };

  it('keeps the requested JWT mode', async () => {
    const env = await createEnv();
    const request = await validateAuthorizationRequest({ ...valid, response_mode: 'jwt' }, env.stores);
    expect(request.responseMode).toBe('jwt');
  });

  it('refuses fragment.jwt with invalid_request, answered signed by the query, with the client', async () => {
    const env = await createEnv();
    const error = await validateAuthorizationRequest(
      { ...valid, response_mode: 'fragment.jwt' },
      env.stores,
    ).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AuthorizationRequestError);
    const refused = error as AuthorizationRequestError;
    expect([refused.error.code, refused.responseMode, refused.client?.clientId]).toEqual([
      'invalid_request',
      'query.jwt',
      'web',
    ]);
  });
});

describe('signAuthorizationResponse (JARM, "The JWT Response Document")', () => {
  it('signs the parameters with iss, aud, iat and exp, in the client algorithm', async () => {
    const clock = createTestClock();
    const keys = await createTestKeys(clock);
    const client = { clientId: 'web', authorizationSignedResponseAlg: 'ES256' as const, profile: null };
    const jwt = await signAuthorizationResponse({ code: 'c1', state: 's' }, client, {
      signer: keys.signer,
      clock,
      config: { issuer: ISSUER },
    });
    expect(decodeProtectedHeader(jwt).alg).toBe('ES256');
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(keys.jwks), {
      issuer: ISSUER,
      audience: 'web',
      currentDate: new Date(clock.nowSeconds() * 1000),
    });
    const now = clock.nowSeconds();
    expect(payload).toEqual({
      code: 'c1',
      state: 's',
      iss: ISSUER,
      aud: 'web',
      iat: now,
      exp: now + AUTHORIZATION_RESPONSE_JWT_TTL_SECONDS,
    });
  });

  it('defaults to RS256, and to ES256 for FAPI 2.0 clients', async () => {
    const clock = createTestClock();
    const keys = await createTestKeys(clock);
    const context = { signer: keys.signer, clock, config: { issuer: ISSUER } };
    const algOf = async (profile: 'fapi2' | null) =>
      decodeProtectedHeader(await signAuthorizationResponse({}, { clientId: 'c', profile }, context)).alg;
    expect([await algOf(null), await algOf('fapi2')]).toEqual(['RS256', 'ES256']);
  });
});
