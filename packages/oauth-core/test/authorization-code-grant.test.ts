import { calculateJwkThumbprint } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import { hashToken } from '../src/tokens/opaque.js';
import {
  CHALLENGE,
  createEnv,
  type Env,
  expectOAuthError,
  jwtClaims,
  jwtHeader,
  VERIFIER,
} from './harness.js';

const REDIRECT = 'https://app.example.test/cb';
const exchange = (env: Env, clientId: string, params: Record<string, string | undefined>, extra = {}) =>
  env
    .tokenRequest(clientId, { grant_type: 'authorization_code', ...params }, extra)
    .then((request) => authorizationCodeGrant.handle(request, env.context));

describe('authorization_code grant', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it('exchanges a code for an RFC 9068 access token, a refresh token and an ID token', async () => {
    const { code, grantId } = await env.seedCode();
    const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });

    expect(response).toMatchObject({
      token_type: 'Bearer',
      expires_in: 300,
      // RFC 6749 §5.1: every granted scope, offline_access included with the refresh token.
      scope: 'openid profile email offline_access orders.read',
    });
    expect(jwtHeader(response.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'RS256' });
    expect(jwtClaims(response.access_token)).toMatchObject({
      iss: env.config.issuer,
      sub: 'u-alice',
      aud: 'orders-api',
      client_id: 'web',
      scope: 'openid profile email orders.read',
      iat: env.T0,
      exp: env.T0 + 300,
      gid: grantId,
      email: 'alice@example.com',
    });
    expect(typeof response.refresh_token).toBe('string');
    const refresh = await env.stores.refreshTokens.findRefreshToken(hashToken(response.refresh_token!));
    expect(refresh).toMatchObject({ grantId, clientId: 'web', parentHash: null, usedAt: null });
    expect(jwtClaims(response.id_token!)).toMatchObject({ aud: 'web', nonce: 'nonce-123', sid: 'sid-1' });
  });

  it('accepts a confidential client without PKCE when the code has no challenge', async () => {
    const { code } = await env.seedCode({ code: { codeChallenge: null } });
    const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT });
    expect(response.access_token).toBeTruthy();
  });

  it('accepts a public client with PKCE', async () => {
    const { code } = await env.seedCode({ code: { clientId: 'spa' } });
    const response = await exchange(env, 'spa', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
    expect(response.refresh_token).toBeTruthy();
  });

  describe.each([
    ['a missing code', {}, { code: undefined }, 'invalid_request'],
    ['a missing redirect_uri', {}, { redirect_uri: undefined }, 'invalid_request'],
    ['a malformed code_verifier', {}, { code_verifier: 'too-short' }, 'invalid_request'],
    ['an unknown code', {}, { code: 'nope' }, 'invalid_grant'],
    ['another redirect_uri', {}, { redirect_uri: 'https://app.example.test/cb2' }, 'invalid_grant'],
    ['a wrong code_verifier', {}, { code_verifier: 'a'.repeat(43) }, 'invalid_grant'],
    ['a missing code_verifier', {}, { code_verifier: undefined }, 'invalid_grant'],
    ['a verifier for a code without PKCE (RFC 9700 §2.1.1)', { codeChallenge: null }, {}, 'invalid_grant'],
    ['a code of another client', { clientId: 'spa' }, {}, 'invalid_grant'],
  ] as const)('rejects %s', (_name, codeOverrides, paramOverrides, errorCode) => {
    it(`with ${errorCode} and leaves the code usable`, async () => {
      const { code, record } = await env.seedCode({ code: codeOverrides });
      const params = { code, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...paramOverrides };
      await expectOAuthError(exchange(env, 'web', params), errorCode);
      const after = await env.stores.codes.findAuthorizationCode(record.codeHash);
      expect(after?.usedAt).toBeNull();
      expect((await env.stores.grants.findGrant(record.grantId))?.revokedAt).toBeNull();
    });
  });

  it('a wrong verifier does not burn the code: the right one still works', async () => {
    const { code } = await env.seedCode();
    await expectOAuthError(
      exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: 'b'.repeat(43) }),
      'invalid_grant',
    );
    const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
    expect(response.access_token).toBeTruthy();
  });

  it('rejects a public client code without PKCE', async () => {
    const { code } = await env.seedCode({ code: { clientId: 'spa', codeChallenge: null } });
    await expectOAuthError(exchange(env, 'spa', { code, redirect_uri: REDIRECT }), 'invalid_grant');
  });

  it.each([
    [59, true],
    [60, false],
  ])('a code is valid for 60 s by default (at +%i s: %s)', async (seconds, ok) => {
    const { code } = await env.seedCode();
    env.clock.advance(seconds);
    const result = exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
    if (ok) await expect(result).resolves.toMatchObject({ token_type: 'Bearer' });
    else await expectOAuthError(result, 'invalid_grant');
  });

  it('rejects a code whose grant was revoked, or whose user is gone', async () => {
    const revoked = await env.seedCode({ grant: { revokedAt: env.T0 } });
    await expectOAuthError(
      exchange(env, 'web', { code: revoked.code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
      'invalid_grant',
    );
    const orphan = await env.seedCode({ code: { sub: 'u-deleted' } });
    await expectOAuthError(
      exchange(env, 'web', { code: orphan.code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
      'invalid_grant',
    );
  });

  it('a second use fails with invalid_grant and revokes every token issued from the code', async () => {
    const { code, grantId } = await env.seedCode({
      code: { scopes: ['openid', 'offline_access', 'billing.read'] },
    });
    const params = { code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
    const first = await exchange(env, 'web', params);
    // billing-api issues opaque tokens: the row must be revoked too.
    const accessRow = await env.stores.accessTokens.findAccessToken(hashToken(first.access_token));
    expect(accessRow?.revokedAt).toBeNull();

    env.clock.advance(5);
    await expectOAuthError(exchange(env, 'web', params), 'invalid_grant');

    expect((await env.stores.grants.findGrant(grantId))?.revokedAt).toBe(env.T0 + 5);
    expect((await env.stores.accessTokens.findAccessToken(hashToken(first.access_token)))?.revokedAt).toBe(
      env.T0 + 5,
    );
    expect(
      (await env.stores.refreshTokens.findRefreshToken(hashToken(first.refresh_token!)))?.revokedAt,
    ).toBe(env.T0 + 5);
  });

  it('10 concurrent exchanges of one code: exactly one succeeds, the rest get invalid_grant', async () => {
    const { code } = await env.seedCode();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason.code).toBe('invalid_grant');
    }
  });

  describe('refresh and ID token issuance', () => {
    it.each([
      ['offline_access granted', {}, ['openid', 'offline_access'], true],
      ['no offline_access', {}, ['openid', 'orders.read'], false],
      [
        'no offline_access but refreshTokensWithoutOfflineAccess',
        { refreshTokensWithoutOfflineAccess: true },
        ['openid'],
        true,
      ],
      [
        'offline_access but no refresh_token grant type',
        { grantTypes: ['authorization_code'] as const },
        ['openid', 'offline_access'],
        false,
      ],
    ])('%s → refresh token: %s', async (_name, clientOverrides, scopes, expected) => {
      env.stores.seed({ clients: [{ ...(await env.client('web')), ...clientOverrides }] });
      const { code } = await env.seedCode({ code: { scopes } });
      const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(response.refresh_token !== undefined).toBe(expected);
    });

    it('issues no ID token without openid', async () => {
      const { code } = await env.seedCode({ code: { scopes: ['orders.read'] } });
      const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(response.id_token).toBeUndefined();
      expect(response.scope).toBe('orders.read');
    });
  });

  describe('audience', () => {
    it('OIDC scopes only → opaque token for the issuer with the default lifetime', async () => {
      const { code, grantId } = await env.seedCode({ code: { scopes: ['openid', 'profile'] } });
      const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(response.access_token.split('.')).toHaveLength(1);
      expect(response.expires_in).toBe(env.config.defaultAccessTokenTtl);
      const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
      expect(row).toMatchObject({
        audience: [env.config.issuer],
        grantId,
        sub: 'u-alice',
        scopes: ['openid', 'profile'],
        claims: {},
      });
    });

    it('an opaque resource keeps its user claims on the row', async () => {
      const { code } = await env.seedCode({ code: { scopes: ['openid', 'profile', 'billing.read'] } });
      const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(response.expires_in).toBe(600);
      const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
      expect(row).toMatchObject({
        audience: ['billing-api'],
        scopes: ['openid', 'profile', 'billing.read'],
        claims: { name: 'Alice Example' },
      });
    });

    it('scopes of two resources and no resource named → the resource whose id sorts first', async () => {
      const { code } = await env.seedCode({ code: { scopes: ['openid', 'orders.read', 'billing.read'] } });
      const response = await exchange(env, 'web', { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      // The response lists every granted scope; the access token carries billing-api's only.
      expect(response.scope).toBe('openid orders.read billing.read');
      const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
      expect(row?.scopes).toEqual(['openid', 'billing.read']);
    });

    it('the RFC 8707 resource parameter picks the audience', async () => {
      const { code } = await env.seedCode({ code: { scopes: ['openid', 'orders.read', 'billing.read'] } });
      const response = await exchange(
        env,
        'web',
        { code, redirect_uri: REDIRECT, code_verifier: VERIFIER },
        { resources: ['orders-api'] },
      );
      expect(jwtClaims(response.access_token)).toMatchObject({
        aud: 'orders-api',
        scope: 'openid orders.read',
      });
    });

    it.each([
      ['an unknown resource', [], ['https://nope.example']],
      ['a resource not bound at authorization', ['orders-api'], ['billing-api']],
    ])('rejects %s with invalid_target, leaving the code usable', async (_name, bound, requested) => {
      const { code, record } = await env.seedCode({ code: { resources: bound } });
      await expectOAuthError(
        exchange(
          env,
          'web',
          { code, redirect_uri: REDIRECT, code_verifier: VERIFIER },
          { resources: requested },
        ),
        'invalid_target',
      );
      expect((await env.stores.codes.findAuthorizationCode(record.codeHash))?.usedAt).toBeNull();
    });
  });

  it('a DPoP proof makes a DPoP-bound token (cnf.jkt) and binds a public client refresh token', async () => {
    const jkt = await calculateJwkThumbprint({
      kty: 'EC',
      crv: 'P-256',
      x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
      y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
    });
    const { code } = await env.seedCode({ code: { clientId: 'spa' } });
    const response = await exchange(
      env,
      'spa',
      { code, redirect_uri: REDIRECT, code_verifier: VERIFIER },
      { dpopJkt: jkt },
    );
    expect(response.token_type).toBe('DPoP');
    expect(jwtClaims(response.access_token).cnf).toEqual({ jkt });
    expect(
      (await env.stores.refreshTokens.findRefreshToken(hashToken(response.refresh_token!)))?.dpopJkt,
    ).toBe(jkt);
  });

  it('declares its parameters', () => {
    expect(authorizationCodeGrant.grantType).toBe('authorization_code');
    expect(authorizationCodeGrant.parameters).toContain('code_verifier');
    expect(CHALLENGE).toHaveLength(43);
  });
});
