import { beforeEach, describe, expect, it } from 'vitest';
import {
  type AuthorizationParams,
  AuthorizationRequestError,
  issueAuthorizationCode,
  validateAuthorizationRequest,
} from '../src/authorization.js';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import { hashToken } from '../src/tokens/opaque.js';
import { CHALLENGE, createEnv, type Env, jwtClaims, VERIFIER } from './harness.js';

const REDIRECT = 'https://app.example.test/cb';
const valid = {
  client_id: 'web',
  redirect_uri: REDIRECT,
  response_type: 'code',
  scope: 'openid profile orders.read',
  state: 'st-1',
  nonce: 'n-1',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
};

async function rejection(env: Env, params: AuthorizationParams): Promise<AuthorizationRequestError> {
  try {
    await validateAuthorizationRequest(params, env.stores);
  } catch (error) {
    if (error instanceof AuthorizationRequestError) return error;
    throw error;
  }
  throw new Error('expected an AuthorizationRequestError');
}

describe('validateAuthorizationRequest', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it('returns the validated request', async () => {
    const request = await validateAuthorizationRequest(
      {
        ...valid,
        prompt: 'login consent login',
        max_age: '0',
        login_hint: 'alice',
        resource: ['orders-api', 'orders-api'],
      },
      env.stores,
    );
    expect(request).toMatchObject({
      client: { clientId: 'web' },
      redirectUri: REDIRECT,
      responseType: 'code',
      responseMode: 'query',
      scopes: ['openid', 'profile', 'orders.read'],
      state: 'st-1',
      nonce: 'n-1',
      codeChallenge: CHALLENGE,
      codeChallengeMethod: 'S256',
      prompt: ['login', 'consent'],
      maxAge: 0,
      resources: ['orders-api'],
      loginHint: 'alice',
    });
  });

  it('defaults: query mode, no state, nonce, prompt, max_age or resources', async () => {
    const { state: _s, nonce: _n, ...rest } = valid;
    const request = await validateAuthorizationRequest(rest, env.stores);
    expect(request).toMatchObject({
      responseMode: 'query',
      state: null,
      nonce: null,
      prompt: [],
      maxAge: null,
      resources: [],
    });
  });

  it('accepts form_post, a single resource string, and a confidential client without PKCE', async () => {
    const { code_challenge: _c, code_challenge_method: _m, ...rest } = valid;
    const request = await validateAuthorizationRequest(
      { ...rest, response_mode: 'form_post', resource: 'billing-api' },
      env.stores,
    );
    expect(request).toMatchObject({
      responseMode: 'form_post',
      resources: ['billing-api'],
      codeChallenge: null,
      codeChallengeMethod: null,
    });
  });

  it.each([
    ['a missing client_id', { client_id: undefined }],
    ['an empty client_id', { client_id: '' }],
    ['an unknown client_id', { client_id: 'ghost' }],
    ['a repeated client_id', { client_id: ['web', 'web'] }],
    ['a missing redirect_uri', { redirect_uri: undefined }],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/cb' }],
    ['a redirect_uri that only extends a registered one', { redirect_uri: `${REDIRECT}/more` }],
    ['a redirect_uri differing in case', { redirect_uri: REDIRECT.toUpperCase() }],
    ['a repeated redirect_uri', { redirect_uri: [REDIRECT, REDIRECT] }],
    // Even with other errors present, a bad redirect_uri wins: nothing is redirected.
    [
      'a bad redirect_uri and a bad response_type',
      { redirect_uri: 'https://evil.example/cb', response_type: 'token' },
    ],
  ] as const)('%s is NOT redirectable (invalid_request)', async (_name, overrides) => {
    const error = await rejection(env, { ...valid, ...overrides });
    expect(error.redirectable).toBe(false);
    expect(error.redirectUri).toBeNull();
    expect(error.error.code).toBe('invalid_request');
    expect(error.error.status).toBe(400);
  });

  it.each([
    ['a missing response_type', { response_type: undefined }, 'invalid_request'],
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['response_type=code id_token', { response_type: 'code id_token' }, 'unsupported_response_type'],
    ['response_mode=fragment', { response_mode: 'fragment' }, 'invalid_request'],
    ['a missing scope', { scope: undefined }, 'invalid_scope'],
    ['an unknown scope', { scope: 'openid admin' }, 'invalid_scope'],
    ['a malformed scope', { scope: 'open"id' }, 'invalid_scope'],
    ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    [
      'a code_challenge without a method (plain by default)',
      { code_challenge_method: undefined },
      'invalid_request',
    ],
    ['a code_challenge_method without a challenge', { code_challenge: undefined }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['prompt=none with login', { prompt: 'none login' }, 'invalid_request'],
    ['an unknown prompt', { prompt: 'bogus' }, 'invalid_request'],
    ['a negative max_age', { max_age: '-1' }, 'invalid_request'],
    ['a fractional max_age', { max_age: '1.5' }, 'invalid_request'],
    ['a non-numeric max_age', { max_age: 'soon' }, 'invalid_request'],
    ['an unknown resource', { resource: ['orders-api', 'https://nope.example'] }, 'invalid_target'],
    ['a repeated scope parameter', { scope: ['openid', 'openid'] }, 'invalid_request'],
    ['a request object', { request: 'eyJ.x.y' }, 'invalid_request'],
    ['a request_uri', { request_uri: 'urn:x' }, 'invalid_request'],
  ] as const)('%s → redirectable %s with state and response mode', async (_name, overrides, code) => {
    const error = await rejection(env, { ...valid, response_mode: 'form_post', ...overrides });
    expect(error.redirectable).toBe(true);
    expect(error.redirectUri).toBe(REDIRECT);
    expect(error.state).toBe('st-1');
    expect(error.error.code).toBe(code);
    // An invalid response_mode cannot be used to answer: the error goes back by query.
    expect(error.responseMode).toBe('response_mode' in overrides ? 'query' : 'form_post');
  });

  it('a public client without PKCE → redirectable invalid_request', async () => {
    const { code_challenge: _c, code_challenge_method: _m, ...rest } = valid;
    const error = await rejection(env, { ...rest, client_id: 'spa' });
    expect({ redirectable: error.redirectable, code: error.error.code }).toEqual({
      redirectable: true,
      code: 'invalid_request',
    });
  });

  it('a client without the authorization_code grant → redirectable unauthorized_client', async () => {
    env.stores.seed({ clients: [{ ...(await env.client('web')), grantTypes: ['client_credentials'] }] });
    const error = await rejection(env, valid);
    expect({ redirectable: error.redirectable, code: error.error.code }).toEqual({
      redirectable: true,
      code: 'unauthorized_client',
    });
  });

  it('redirectParameters carry error, state and iss (RFC 9207)', async () => {
    const error = await rejection(env, { ...valid, response_type: 'token' });
    expect(error.redirectParameters('https://issuer.example')).toMatchObject({
      error: 'unsupported_response_type',
      state: 'st-1',
      iss: 'https://issuer.example',
    });
  });

  it('redirectParameters omit state when none was sent', async () => {
    const error = await rejection(env, { ...valid, state: undefined, response_type: 'token' });
    expect(error.redirectParameters('https://issuer.example')).not.toHaveProperty('state');
  });
});

describe('issueAuthorizationCode', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });
  const codeContext = (e: Env) => ({ stores: e.stores, clock: e.clock, random: e.random, config: e.config });

  it('creates the grant and the code in one transaction; the clear code is returned, its hash stored', async () => {
    const request = await validateAuthorizationRequest({ ...valid, resource: 'orders-api' }, env.stores);
    const issued = await issueAuthorizationCode(
      request,
      { sub: 'u-alice', sid: 'sid-9', authTime: env.T0 - 3 },
      codeContext(env),
    );
    expect(issued.expiresAt).toBe(env.T0 + 60);
    const code = await env.stores.codes.findAuthorizationCode(hashToken(issued.code));
    expect(code).toMatchObject({
      grantId: issued.grantId,
      clientId: 'web',
      sub: 'u-alice',
      redirectUri: REDIRECT,
      codeChallenge: CHALLENGE,
      nonce: 'n-1',
      scopes: ['openid', 'profile', 'orders.read'],
      resources: ['orders-api'],
      sid: 'sid-9',
      authTime: env.T0 - 3,
      expiresAt: env.T0 + 60,
      usedAt: null,
    });
    expect(await env.stores.grants.findGrant(issued.grantId)).toMatchObject({
      clientId: 'web',
      sub: 'u-alice',
      scopes: ['openid', 'profile', 'orders.read'],
      resources: ['orders-api'],
      createdAt: env.T0,
      revokedAt: null,
    });
  });

  it('grants requested ∩ client ∩ user when no scopes are given', async () => {
    env.stores.seed({
      users: [
        { ...(await env.stores.users.findUserBySub('u-alice'))!, allowedScopes: ['openid', 'orders.read'] },
      ],
    });
    const request = await validateAuthorizationRequest(valid, env.stores);
    const issued = await issueAuthorizationCode(
      request,
      { sub: 'u-alice', sid: null, authTime: env.T0 },
      codeContext(env),
    );
    expect(issued.scopes).toEqual(['openid', 'orders.read']);
  });

  it('consent may narrow the scopes but never widen them', async () => {
    const request = await validateAuthorizationRequest(valid, env.stores);
    const issued = await issueAuthorizationCode(
      request,
      { sub: 'u-alice', scopes: ['openid', 'orders.write', 'email'], sid: null, authTime: env.T0 },
      codeContext(env),
    );
    expect(issued.scopes).toEqual(['openid']);
  });

  it('nothing grantable → redirectable access_denied, nothing written', async () => {
    const request = await validateAuthorizationRequest(valid, env.stores);
    await expect(
      issueAuthorizationCode(
        request,
        { sub: 'u-alice', scopes: [], sid: null, authTime: env.T0 },
        codeContext(env),
      ),
    ).rejects.toMatchObject({ redirectable: true, error: { code: 'access_denied' }, state: 'st-1' });
    await expect(
      issueAuthorizationCode(request, { sub: 'u-nobody', sid: null, authTime: env.T0 }, codeContext(env)),
    ).rejects.toMatchObject({ redirectable: true, error: { code: 'access_denied' } });
    expect(await env.stores.grants.findGrant('any')).toBeNull();
  });

  it('the code is redeemable end to end at the token endpoint', async () => {
    const request = await validateAuthorizationRequest(
      { ...valid, scope: 'openid email offline_access orders.read' },
      env.stores,
    );
    const { code } = await issueAuthorizationCode(
      request,
      { sub: 'u-alice', sid: 'sid-2', authTime: env.T0 - 1 },
      codeContext(env),
    );
    const tokenRequest = await env.tokenRequest('web', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    });
    const response = await authorizationCodeGrant.handle(tokenRequest, env.context);
    expect(jwtClaims(response.id_token!)).toMatchObject({
      nonce: 'n-1',
      sid: 'sid-2',
      auth_time: env.T0 - 1,
      email: 'alice@example.com',
    });
    expect(response.refresh_token).toBeTruthy();
  });
});
