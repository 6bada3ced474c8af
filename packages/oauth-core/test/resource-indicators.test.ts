import { beforeEach, describe, expect, it } from 'vitest';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import { formatScope } from '../src/scopes.js';
import { hashToken } from '../src/tokens/opaque.js';
import { createEnv, type Env, expectOAuthError, jwtClaims, VERIFIER } from './harness.js';

/**
 * RFC 8707 across a grant: the authorization request binds several resources; every token request
 * names (at most) one, and gets an access token for that one only. A client holding a grant for two
 * APIs asks one refresh per API.
 */

const SCOPES = ['openid', 'offline_access', 'orders.read', 'billing.read'];

async function grantForTwoResources(env: Env, resources = ['orders-api', 'billing-api']) {
  const { code } = await env.seedCode({ code: { scopes: SCOPES, resources } });
  const request = await env.tokenRequest(
    'web',
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://app.example.test/cb',
      code_verifier: VERIFIER,
    },
    { resources: ['orders-api'] },
  );
  return authorizationCodeGrant.handle(request, env.context);
}

const refresh = async (env: Env, refreshToken: string, resources: string[]) =>
  refreshTokenGrant.handle(
    await env.tokenRequest(
      'web',
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      { resources },
    ),
    env.context,
  );

describe('resource indicators (RFC 8707)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it('issues the code exchange for the named resource only, with that resource’s scopes', async () => {
    const response = await grantForTwoResources(env);
    expect(jwtClaims(response.access_token)).toMatchObject({
      aud: 'orders-api',
      scope: 'openid orders.read',
    });
    // The response lists the whole grant (RFC 6749 §5.1); the token carries its resource's part.
    expect(response.scope).toBe(formatScope(SCOPES));
  });

  it('gives a token per resource on refresh: one refresh per resource, each rotating the refresh token', async () => {
    const first = await grantForTwoResources(env);
    const billing = await refresh(env, first.refresh_token!, ['billing-api']);
    // billing-api issues opaque tokens: the stored row names the audience.
    const row = await env.stores.accessTokens.findAccessToken(hashToken(billing.access_token));
    expect(row).toMatchObject({ audience: ['billing-api'], scopes: ['openid', 'billing.read'] });
    expect(billing.scope).toBe(formatScope(SCOPES));

    const orders = await refresh(env, billing.refresh_token!, ['orders-api']);
    expect(jwtClaims(orders.access_token)).toMatchObject({ aud: 'orders-api', scope: 'openid orders.read' });
    // The rotated refresh tokens keep both resources and the whole scope.
    const latest = await env.stores.refreshTokens.findRefreshToken(hashToken(orders.refresh_token!));
    expect(latest).toMatchObject({ resources: ['orders-api', 'billing-api'], scopes: SCOPES });
  });

  it('without a resource, refreshes for the bound resource whose id sorts first', async () => {
    const first = await grantForTwoResources(env);
    const next = await refresh(env, first.refresh_token!, []);
    const row = await env.stores.accessTokens.findAccessToken(hashToken(next.access_token));
    expect(row).toMatchObject({ audience: ['billing-api'], scopes: ['openid', 'billing.read'] });
  });

  it.each([
    ['two resources in one token request', ['orders-api', 'billing-api']],
    ['an unknown resource', ['https://unknown.example']],
  ])('refuses %s with invalid_target, leaving the refresh token usable', async (_name, resources) => {
    const first = await grantForTwoResources(env);
    await expectOAuthError(refresh(env, first.refresh_token!, resources), 'invalid_target');
    await expect(refresh(env, first.refresh_token!, ['orders-api'])).resolves.toBeDefined();
  });

  it('refuses a resource that the authorization request did not name (RFC 8707 §2.2)', async () => {
    const first = await grantForTwoResources(env, ['orders-api']);
    await expectOAuthError(refresh(env, first.refresh_token!, ['billing-api']), 'invalid_target');
  });
});
