import { beforeEach, describe, expect, it } from 'vitest';
import type { IntrospectionCaller } from '../src/client-authentication.js';
import { clientCredentialsGrant } from '../src/grants/client-credentials.js';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import { introspectToken } from '../src/introspection.js';
import type { Client, Resource } from '../src/model.js';
import { revokeToken } from '../src/revocation.js';
import { issueAccessToken } from '../src/tokens/access-token.js';
import { resolveUserInfo } from '../src/userinfo.js';
import { createEnv, type Env, expectOAuthError, obtainTokens } from './harness.js';

const asResource = async (env: Env, id: string): Promise<IntrospectionCaller> => ({
  type: 'resource',
  resource: (await env.stores.resources.findResource(id)) as Resource,
});
const asClient = async (env: Env, id: string): Promise<IntrospectionCaller> => ({
  type: 'client',
  client: (await env.stores.clients.findClient(id)) as Client,
});
const ctx = (env: Env) => ({
  stores: env.stores,
  verifier: env.keys.verifier,
  clock: env.clock,
  config: env.config,
});

describe('introspectToken', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it('a JWT access token is active for its resource, with the RFC 7662 members and copied claims', async () => {
    const { response, grantId } = await obtainTokens(env);
    const result = await introspectToken(
      response.access_token,
      undefined,
      await asResource(env, 'orders-api'),
      ctx(env),
    );
    expect(result).toMatchObject({
      active: true,
      scope: 'openid profile email orders.read',
      client_id: 'web',
      sub: 'u-alice',
      aud: 'orders-api',
      exp: env.T0 + 300,
      iat: env.T0,
      iss: env.config.issuer,
      token_type: 'Bearer',
      email: 'alice@example.com',
    });
    expect(typeof result.jti).toBe('string');
    expect(result).not.toHaveProperty('gid');
    expect(grantId).toBeTruthy();
  });

  // The registry lookups skip disabled entries; a token whose client or user the
  // registry no longer finds is inactive, whatever its format.
  it.each([
    ['client', (_stores: typeof env.stores) => ({ clients: { findClient: async () => null } })],
    [
      'user',
      (stores: typeof env.stores) => ({
        users: { findUserBySub: async () => null, findUserByUsername: async () => null },
        // The store's one-read path finds no enabled user either.
        accessTokens: {
          ...stores.accessTokens,
          findAccessTokenWithUser: async (hash: string) => {
            const found = await stores.accessTokens.findAccessTokenWithUser!(hash);
            return found && { ...found, user: null };
          },
        },
      }),
    ],
  ])('a token whose %s is disabled is inactive (JWT, opaque, refresh token)', async (_kind, withoutIt) => {
    const without = withoutIt(env.stores);
    const jwt = (await obtainTokens(env)).response;
    const opaque = (await obtainTokens(env, { scopes: ['openid', 'offline_access', 'billing.read'] }))
      .response;
    const disabled = { ...ctx(env), stores: { ...env.stores, ...without } };
    for (const [token, caller] of [
      [jwt.access_token, await asResource(env, 'orders-api')],
      [opaque.access_token, await asResource(env, 'billing-api')],
    ] as const) {
      expect((await introspectToken(token, undefined, caller, ctx(env))).active).toBe(true);
      expect(await introspectToken(token, undefined, caller, disabled)).toEqual({ active: false });
    }
    const asWeb = await asClient(env, 'web');
    expect((await introspectToken(jwt.refresh_token!, 'refresh_token', asWeb, ctx(env))).active).toBe(true);
    if (_kind === 'user') {
      expect(await introspectToken(jwt.refresh_token!, 'refresh_token', asWeb, disabled)).toEqual({
        active: false,
      });
    }
    await expectOAuthError(resolveUserInfo(jwt.access_token, disabled), 'invalid_token', 401);
  });

  it('a client_credentials token needs its client only, not a user', async () => {
    const request = await env.tokenRequest('svc', { grant_type: 'client_credentials', scope: 'orders.read' });
    const { access_token } = await clientCredentialsGrant.handle(request, env.context);
    const caller = await asResource(env, 'orders-api');
    const noUsers = {
      ...ctx(env),
      stores: {
        ...env.stores,
        users: { findUserBySub: async () => null, findUserByUsername: async () => null },
      },
    };
    expect((await introspectToken(access_token, undefined, caller, noUsers)).active).toBe(true);
    const noClients = { ...ctx(env), stores: { ...env.stores, clients: { findClient: async () => null } } };
    expect(await introspectToken(access_token, undefined, caller, noClients)).toEqual({ active: false });
  });

  it('an opaque access token is active for its resource and its client, with claims kept on the row', async () => {
    const { response } = await obtainTokens(env, { scopes: ['openid', 'profile', 'billing.read'] });
    const byResource = await introspectToken(
      response.access_token,
      'access_token',
      await asResource(env, 'billing-api'),
      ctx(env),
    );
    expect(byResource).toMatchObject({
      active: true,
      aud: 'billing-api',
      scope: 'openid profile billing.read',
      name: 'Alice Example',
      token_type: 'Bearer',
    });
    const byClient = await introspectToken(
      response.access_token,
      undefined,
      await asClient(env, 'web'),
      ctx(env),
    );
    expect(byClient.active).toBe(true);
  });

  it('a refresh token is active for its own client only', async () => {
    const { response } = await obtainTokens(env);
    const own = await introspectToken(
      response.refresh_token!,
      'refresh_token',
      await asClient(env, 'web'),
      ctx(env),
    );
    expect(own).toMatchObject({ active: true, client_id: 'web', sub: 'u-alice', iat: env.T0 });
    expect(own.token_type).toBeUndefined();
    expect(
      await introspectToken(response.refresh_token!, undefined, await asClient(env, 'svc'), ctx(env)),
    ).toEqual({ active: false });
    expect(
      await introspectToken(
        response.refresh_token!,
        undefined,
        await asResource(env, 'orders-api'),
        ctx(env),
      ),
    ).toEqual({ active: false });
  });

  it.each([
    [
      'a token addressed to another resource',
      async (env: Env) => (await obtainTokens(env)).response.access_token,
      'billing-api',
    ],
    ['an unknown token', async () => 'x'.repeat(43), 'orders-api'],
    ['an empty token', async () => '', 'orders-api'],
    [
      'a JWT with a bad signature',
      async (env: Env) => `${(await obtainTokens(env)).response.access_token.slice(0, -4)}AAAA`,
      'orders-api',
    ],
    ['garbage with dots', async () => 'a.b.c', 'orders-api'],
  ])('%s is inactive', async (_name, make, resourceId) => {
    const token = await make(env);
    expect(await introspectToken(token, undefined, await asResource(env, resourceId), ctx(env))).toEqual({
      active: false,
    });
  });

  it('inactive once expired (JWT and opaque)', async () => {
    const jwt = (await obtainTokens(env)).response.access_token;
    const opaque = (await obtainTokens(env, { scopes: ['openid', 'billing.read'] })).response.access_token;
    env.clock.advance(600);
    expect(
      (await introspectToken(jwt, undefined, await asResource(env, 'orders-api'), ctx(env))).active,
    ).toBe(false);
    expect(
      (await introspectToken(opaque, undefined, await asResource(env, 'billing-api'), ctx(env))).active,
    ).toBe(false);
  });

  it('a JWT goes inactive when its grant is revoked (gid), or its jti is denylisted', async () => {
    const first = await obtainTokens(env);
    await env.stores.grants.revokeGrant(first.grantId, env.T0);
    expect(
      (
        await introspectToken(
          first.response.access_token,
          undefined,
          await asResource(env, 'orders-api'),
          ctx(env),
        )
      ).active,
    ).toBe(false);

    const second = await obtainTokens(env);
    await revokeToken(second.response.access_token, 'access_token', { clientId: 'web' }, ctx(env));
    expect(
      (
        await introspectToken(
          second.response.access_token,
          undefined,
          await asResource(env, 'orders-api'),
          ctx(env),
        )
      ).active,
    ).toBe(false);
  });

  it('refresh token reuse makes the JWT access tokens of the chain inactive', async () => {
    const { response } = await obtainTokens(env);
    const request = await env.tokenRequest('web', {
      grant_type: 'refresh_token',
      refresh_token: response.refresh_token,
    });
    const rotated = await refreshTokenGrant.handle(request, env.context);
    await expectOAuthError(refreshTokenGrant.handle(request, env.context), 'invalid_grant');
    for (const token of [response.access_token, rotated.access_token]) {
      expect(
        (await introspectToken(token, undefined, await asResource(env, 'orders-api'), ctx(env))).active,
      ).toBe(false);
    }
  });

  it('a client_credentials token is introspectable by its resource, and reports DPoP binding', async () => {
    const request = await env.tokenRequest(
      'svc',
      { grant_type: 'client_credentials', scope: 'orders.read' },
      { dpopJkt: 'jkt-9' },
    );
    const response = await clientCredentialsGrant.handle(request, env.context);
    expect(
      await introspectToken(response.access_token, undefined, await asResource(env, 'orders-api'), ctx(env)),
    ).toMatchObject({
      active: true,
      sub: 'svc',
      client_id: 'svc',
      token_type: 'DPoP',
      cnf: { jkt: 'jkt-9' },
    });
  });
});

describe('revokeToken', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it.each([undefined, 'refresh_token', 'access_token', 'bogus_hint'])(
    'revoking a refresh token (hint %s) revokes the grant and its access tokens',
    async (hint) => {
      const { response, grantId } = await obtainTokens(env, {
        scopes: ['openid', 'offline_access', 'billing.read'],
      });
      await revokeToken(response.refresh_token!, hint, { clientId: 'web' }, ctx(env));
      expect((await env.stores.grants.findGrant(grantId))?.revokedAt).toBe(env.T0);
      const caller = await asResource(env, 'billing-api');
      expect((await introspectToken(response.access_token, undefined, caller, ctx(env))).active).toBe(false);
      const request = await env.tokenRequest('web', {
        grant_type: 'refresh_token',
        refresh_token: response.refresh_token,
      });
      await expectOAuthError(refreshTokenGrant.handle(request, env.context), 'invalid_grant');
    },
  );

  it('revoking an opaque access token revokes that token only', async () => {
    const { response, grantId } = await obtainTokens(env, {
      scopes: ['openid', 'offline_access', 'billing.read'],
    });
    await revokeToken(response.access_token, undefined, { clientId: 'web' }, ctx(env));
    expect(
      (
        await introspectToken(
          response.access_token,
          undefined,
          await asResource(env, 'billing-api'),
          ctx(env),
        )
      ).active,
    ).toBe(false);
    expect((await env.stores.grants.findGrant(grantId))?.revokedAt).toBeNull();
  });

  it('tokens of another client are left alone, silently', async () => {
    const { response, grantId } = await obtainTokens(env);
    for (const token of [response.refresh_token!, response.access_token]) {
      await expect(revokeToken(token, undefined, { clientId: 'svc' }, ctx(env))).resolves.toBeUndefined();
    }
    expect((await env.stores.grants.findGrant(grantId))?.revokedAt).toBeNull();
    expect(
      (await introspectToken(response.access_token, undefined, await asResource(env, 'orders-api'), ctx(env)))
        .active,
    ).toBe(true);
  });

  it('unknown and malformed tokens are no error', async () => {
    for (const token of ['', 'unknown', 'a.b.c', 'x'.repeat(43)]) {
      await expect(
        revokeToken(token, 'refresh_token', { clientId: 'web' }, ctx(env)),
      ).resolves.toBeUndefined();
    }
  });

  it('a JWT access token is denylisted by jti until it expires', async () => {
    const issued = await issueAccessToken(
      {
        client: { clientId: 'web' },
        sub: 'u-alice',
        grantId: null,
        scopes: ['orders.read'],
        resource: (await env.stores.resources.findResource('orders-api'))!,
        user: null,
      },
      { ...env.context, accessTokens: env.stores.accessTokens },
    );
    await revokeToken(issued.token, undefined, { clientId: 'web' }, ctx(env));
    expect(await env.stores.accessTokens.isJwtAccessTokenRevoked(issued.jti!)).toBe(true);
  });
});

describe('resolveUserInfo', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it.each([
    [['openid'], { sub: 'u-alice' }],
    [['openid', 'profile'], { sub: 'u-alice', name: 'Alice Example' }],
    [['openid', 'email'], { sub: 'u-alice', email: 'alice@example.com', email_verified: true }],
    [
      ['openid', 'profile', 'email', 'orders.read'],
      { sub: 'u-alice', name: 'Alice Example', email: 'alice@example.com', email_verified: true },
    ],
  ])('scopes %j → %j', async (scopes, expected) => {
    const { response } = await obtainTokens(env, { scopes });
    expect(await resolveUserInfo(response.access_token, ctx(env))).toEqual(expected);
  });

  it.each([
    ['with the token (the store reads both at once)', true],
    ['after the token', false],
  ])(
    'reads the account once, %s: the check that the user is still enabled is the answer',
    async (_how, joined) => {
      const { response } = await obtainTokens(env, { scopes: ['openid', 'profile'] });
      const reads: string[] = [];
      const { accessTokens, users } = env.stores;
      const counting = {
        ...ctx(env),
        stores: {
          ...env.stores,
          accessTokens: {
            ...accessTokens,
            findAccessTokenWithUser: joined
              ? async (hash: string) => {
                  const found = await accessTokens.findAccessTokenWithUser!(hash);
                  if (found?.user) reads.push(found.user.sub);
                  return found;
                }
              : undefined,
          },
          users: {
            ...users,
            findUserBySub: async (sub: string) => {
              reads.push(sub);
              return users.findUserBySub(sub);
            },
          },
        },
      };
      expect(await resolveUserInfo(response.access_token, counting)).toMatchObject({ sub: 'u-alice' });
      expect(reads).toEqual(['u-alice']);
    },
  );

  it('accepts the opaque issuer-addressed token of an OIDC-only grant', async () => {
    const { response } = await obtainTokens(env, { scopes: ['openid', 'profile'] });
    expect(response.access_token.includes('.')).toBe(false);
    expect(await resolveUserInfo(response.access_token, ctx(env))).toEqual({
      sub: 'u-alice',
      name: 'Alice Example',
    });
  });

  it('without openid → 403 insufficient_scope with a Bearer challenge', async () => {
    const { response } = await obtainTokens(env, { scopes: ['orders.read'] });
    const error = await expectOAuthError(
      resolveUserInfo(response.access_token, ctx(env)),
      'insufficient_scope',
      403,
    );
    expect(error.headers['WWW-Authenticate']).toMatch(/^Bearer error="insufficient_scope".*scope="openid"/);
  });

  it.each([
    ['an unknown token', async () => 'nope'],
    ['an empty token', async () => ''],
    [
      'an expired token',
      async (env: Env) => {
        const token = (await obtainTokens(env)).response.access_token;
        env.clock.advance(300);
        return token;
      },
    ],
    [
      'a token of a revoked grant',
      async (env: Env) => {
        const { response, grantId } = await obtainTokens(env);
        await env.stores.grants.revokeGrant(grantId, env.T0);
        return response.access_token;
      },
    ],
    // The user store below answers null for this case.
    ['a token of a deleted user', async (env: Env) => (await obtainTokens(env)).response.access_token],
    [
      'a DPoP-bound token without its key',
      async (env: Env) => (await obtainTokens(env, { dpopJkt: 'jkt-1' })).response.access_token,
    ],
  ])('%s → 401 invalid_token with a Bearer challenge', async (name, make) => {
    const token = await make(env);
    const context = ctx(env);
    const stores = name.includes('deleted')
      ? { ...env.stores, users: { ...env.stores.users, findUserBySub: async () => null } }
      : env.stores;
    const error = await expectOAuthError(
      resolveUserInfo(token, { ...context, stores }),
      'invalid_token',
      401,
    );
    expect(error.headers['WWW-Authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('a DPoP-bound token works with its key', async () => {
    const { response } = await obtainTokens(env, { dpopJkt: 'jkt-1' });
    expect(await resolveUserInfo(response.access_token, ctx(env), { dpopJkt: 'jkt-1' })).toMatchObject({
      sub: 'u-alice',
    });
  });
});
