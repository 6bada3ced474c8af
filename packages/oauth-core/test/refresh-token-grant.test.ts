import { beforeEach, describe, expect, it } from 'vitest';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import type { TokenRequest } from '../src/grants/types.js';
import { hashToken } from '../src/tokens/opaque.js';
import { createEnv, type Env, expectOAuthError, jwtClaims, obtainTokens } from './harness.js';

const refresh = (
  env: Env,
  clientId: string,
  params: Record<string, string | undefined>,
  extra: Partial<TokenRequest> = {},
) =>
  env
    .tokenRequest(clientId, { grant_type: 'refresh_token', ...params }, extra)
    .then((request) => refreshTokenGrant.handle(request, env.context));

describe('refresh_token grant', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });

  it('rotates: a new access, refresh and ID token; the new refresh token records its parent', async () => {
    const { response: first, grantId } = await obtainTokens(env);
    env.clock.advance(100);
    const second = await refresh(env, 'web', { refresh_token: first.refresh_token });

    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const old = await env.stores.refreshTokens.findRefreshToken(hashToken(first.refresh_token!));
    expect(old?.usedAt).toBe(env.T0 + 100);
    const next = await env.stores.refreshTokens.findRefreshToken(hashToken(second.refresh_token!));
    expect(next).toMatchObject({
      grantId,
      parentHash: hashToken(first.refresh_token!),
      usedAt: null,
      createdAt: env.T0 + 100,
    });
    expect(jwtClaims(second.access_token)).toMatchObject({
      sub: 'u-alice',
      aud: 'orders-api',
      gid: grantId,
      iat: env.T0 + 100,
    });
    const idToken = jwtClaims(second.id_token!);
    expect(idToken).toMatchObject({ sub: 'u-alice', aud: 'web', auth_time: env.T0 - 30, sid: 'sid-1' });
    expect(idToken.nonce).toBeUndefined();
  });

  it("asks the account's source: ended → invalid_grant, no answer → temporarily_unavailable, active → tokens", async () => {
    const { response: first } = await obtainTokens(env);
    const asked: string[] = [];
    const withStanding = (standing: 'active' | 'ended' | 'unavailable') =>
      env
        .tokenRequest('web', { grant_type: 'refresh_token', refresh_token: first.refresh_token })
        .then((request) =>
          refreshTokenGrant.handle(request, {
            ...env.context,
            accountStanding: async (user) => {
              asked.push(user.sub);
              return standing;
            },
          }),
        );
    await expectOAuthError(withStanding('ended'), 'invalid_grant');
    await expectOAuthError(withStanding('unavailable'), 'temporarily_unavailable', 503);
    // Neither refusal used the token: it still refreshes once the source says the account stands.
    await expect(withStanding('active')).resolves.toMatchObject({ refresh_token: expect.any(String) });
    expect(asked).toEqual(['u-alice', 'u-alice', 'u-alice']);
  });

  it('the new token works and the old one stops working', async () => {
    const { response: first } = await obtainTokens(env);
    const second = await refresh(env, 'web', { refresh_token: first.refresh_token });
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const third = await refresh(env, 'web', { refresh_token: second.refresh_token });
    expect(third.access_token).toEqual(expect.any(String));
    expect(third.refresh_token).not.toBe(second.refresh_token);
    // The rotated-out token is refused (RFC 9700 §4.14.2; what else that does is the next test).
    await expectOAuthError(refresh(env, 'web', { refresh_token: first.refresh_token }), 'invalid_grant');
  });

  it('reuse of a rotated token fails and revokes the whole chain (RFC 9700 §4.14.2)', async () => {
    const { response: first, grantId } = await obtainTokens(env, {
      scopes: ['openid', 'offline_access', 'billing.read'],
    });
    const second = await refresh(env, 'web', { refresh_token: first.refresh_token });
    env.clock.advance(7);

    await expectOAuthError(refresh(env, 'web', { refresh_token: first.refresh_token }), 'invalid_grant');

    expect((await env.stores.grants.findGrant(grantId))?.revokedAt).toBe(env.T0 + 7);
    expect(
      (await env.stores.refreshTokens.findRefreshToken(hashToken(second.refresh_token!)))?.revokedAt,
    ).toBe(env.T0 + 7);
    expect((await env.stores.accessTokens.findAccessToken(hashToken(second.access_token)))?.revokedAt).toBe(
      env.T0 + 7,
    );
    // The legitimate holder of the newest token is cut off too.
    await expectOAuthError(refresh(env, 'web', { refresh_token: second.refresh_token }), 'invalid_grant');
  });

  it('10 parallel refreshes with one token: exactly one success, invalid_grant for the rest', async () => {
    const { response: first } = await obtainTokens(env);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => refresh(env, 'web', { refresh_token: first.refresh_token })),
    );
    const fulfilled = results.filter((r) => r.status === 'fulfilled');
    expect(fulfilled).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason.code).toBe('invalid_grant');
    }
    // The winner's new token is still good: the losers did not revoke the chain.
    const winner = (fulfilled[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof refresh>>>).value;
    await expect(refresh(env, 'web', { refresh_token: winner.refresh_token })).resolves.toBeTruthy();
  });

  describe('lifetimes (absolute 1000 s from the grant, sliding 300 s per token)', () => {
    beforeEach(async () => {
      env.stores.seed({
        clients: [
          { ...(await env.client('web')), refreshTokenAbsoluteTtl: 1000, refreshTokenSlidingTtl: 300 },
        ],
      });
    });

    it('a token expires after the sliding window', async () => {
      const { response } = await obtainTokens(env);
      env.clock.advance(300);
      await expectOAuthError(refresh(env, 'web', { refresh_token: response.refresh_token }), 'invalid_grant');
    });

    it('each rotation slides the window, capped by the absolute end', async () => {
      const { response } = await obtainTokens(env);
      expect(
        (await env.stores.refreshTokens.findRefreshToken(hashToken(response.refresh_token!)))?.expiresAt,
      ).toBe(env.T0 + 300);
      let token = response.refresh_token!;
      for (const step of [250, 250, 250]) {
        env.clock.advance(step);
        token = (await refresh(env, 'web', { refresh_token: token })).refresh_token!;
      }
      // now = T0 + 750: min(T0 + 1000, T0 + 750 + 300)
      expect((await env.stores.refreshTokens.findRefreshToken(hashToken(token)))?.expiresAt).toBe(
        env.T0 + 1000,
      );
      env.clock.advance(249);
      token = (await refresh(env, 'web', { refresh_token: token })).refresh_token!;
      env.clock.advance(1);
      await expectOAuthError(refresh(env, 'web', { refresh_token: token }), 'invalid_grant');
    });

    it('the absolute lifetime counts from the grant even for a fresh token', async () => {
      const { response, grantId } = await obtainTokens(env);
      const grant = await env.stores.grants.findGrant(grantId);
      // A token whose own expiry is later than the grant's absolute end (e.g. the client's TTL shrank).
      await env.stores.refreshTokens.createRefreshToken({
        ...(await env.stores.refreshTokens.findRefreshToken(hashToken(response.refresh_token!)))!,
        tokenHash: hashToken('late-token'),
        expiresAt: grant!.createdAt + 5000,
      });
      env.clock.advance(1000);
      await expectOAuthError(refresh(env, 'web', { refresh_token: 'late-token' }), 'invalid_grant');
    });
  });

  it('re-reads the user: new claims are copied, a deleted user is invalid_grant', async () => {
    const { response } = await obtainTokens(env);
    env.stores.seed({
      users: [{ ...(await env.stores.users.findUserBySub('u-alice'))!, email: 'alice@new.example' }],
    });
    const second = await refresh(env, 'web', { refresh_token: response.refresh_token });
    expect(jwtClaims(second.access_token).email).toBe('alice@new.example');
    expect(jwtClaims(second.id_token!).email).toBe('alice@new.example');

    // The user gone, as both read paths see it: the plain UserStore read, and the store's one-read
    // fast path that joins the user (`findRefreshTokenWithGrantAndUser`).
    const { refreshTokens } = env.stores;
    const withoutUsers = {
      ...env.stores,
      users: { ...env.stores.users, findUserBySub: async () => null },
      refreshTokens: {
        ...refreshTokens,
        async findRefreshTokenWithGrantAndUser(hash: string) {
          const found = await refreshTokens.findRefreshTokenWithGrantAndUser!(hash);
          return found === null ? null : { ...found, user: null };
        },
      },
    };
    const { findRefreshTokenWithGrantAndUser: _fastPath, ...plainRefreshTokens } = withoutUsers.refreshTokens;
    const withoutUsersOrFastPath = { ...withoutUsers, refreshTokens: plainRefreshTokens };
    for (const stores of [withoutUsers, withoutUsersOrFastPath]) {
      const request = await env.tokenRequest('web', {
        grant_type: 'refresh_token',
        refresh_token: second.refresh_token,
      });
      await expectOAuthError(refreshTokenGrant.handle(request, { ...env.context, stores }), 'invalid_grant');
    }
  });

  // RFC 6749 §5.1: the response `scope` is the granted set, offline_access
  // included with a refresh token, in the code and the refresh response alike.
  it('code and refresh responses list every granted scope, offline_access included', async () => {
    const granted = ['openid', 'profile', 'email', 'offline_access', 'orders.read', 'billing.read'];
    const { response: first, grantId } = await obtainTokens(env, { scopes: granted });
    const grant = await env.stores.grants.findGrant(grantId);
    const asSet = (scope: string | undefined) => new Set((scope ?? '').split(' '));
    expect(asSet(first.scope)).toEqual(new Set(grant!.scopes));
    expect(first.refresh_token).toBeTruthy();
    const second = await refresh(env, 'web', { refresh_token: first.refresh_token });
    expect(asSet(second.scope)).toEqual(new Set(granted));
    // The access token itself still carries only its audience's scopes (billing-api sorts first).
    const row = await env.stores.accessTokens.findAccessToken(hashToken(second.access_token));
    expect(row?.scopes).toEqual(['openid', 'profile', 'email', 'billing.read']);
  });

  it('leaves offline_access out of the response when no refresh token is issued', async () => {
    env.stores.seed({
      clients: [{ ...(await env.stores.clients.findClient('web'))!, grantTypes: ['authorization_code'] }],
    });
    const { response } = await obtainTokens(env);
    expect(response.refresh_token).toBeUndefined();
    expect(response.scope).toBe('openid profile email orders.read');
  });

  it('narrows the scope of the access token; the new refresh token keeps the original scope', async () => {
    const { response } = await obtainTokens(env);
    const second = await refresh(env, 'web', {
      refresh_token: response.refresh_token,
      scope: 'openid orders.read',
    });
    expect(second.scope).toBe('openid orders.read');
    expect(jwtClaims(second.access_token).scope).toBe('openid orders.read');
    expect(jwtClaims(second.id_token!).email).toBeUndefined();
    const stored = await env.stores.refreshTokens.findRefreshToken(hashToken(second.refresh_token!));
    expect(stored?.scopes).toEqual(['openid', 'profile', 'email', 'offline_access', 'orders.read']);
  });

  it.each([
    ['a wider scope', 'web', { scope: 'openid orders.write' }, {}, 'invalid_scope'],
    ['a missing refresh_token', 'web', { refresh_token: undefined }, {}, 'invalid_request'],
    ['an unknown token', 'web', { refresh_token: 'nope' }, {}, 'invalid_grant'],
    ['a token of another client', 'spa', {}, {}, 'invalid_grant'],
    ['an unknown resource', 'web', {}, { resources: ['https://nope.example'] }, 'invalid_target'],
  ] as const)(
    'rejects %s with %s and keeps the token usable',
    async (_name, clientId, params, extra, code) => {
      const { response, grantId } = await obtainTokens(env);
      await expectOAuthError(
        refresh(env, clientId, { refresh_token: response.refresh_token, ...params }, extra),
        code,
      );
      expect((await env.stores.grants.findGrant(grantId))?.revokedAt).toBeNull();
      await expect(refresh(env, 'web', { refresh_token: response.refresh_token })).resolves.toBeTruthy();
    },
  );

  it('rejects a token whose grant was revoked', async () => {
    const { response, grantId } = await obtainTokens(env);
    await env.stores.grants.revokeGrant(grantId, env.T0);
    await expectOAuthError(refresh(env, 'web', { refresh_token: response.refresh_token }), 'invalid_grant');
  });

  it('a DPoP-bound refresh token needs a proof of the same key (RFC 9449 §5)', async () => {
    const { response } = await obtainTokens(env, { clientId: 'spa', dpopJkt: 'jkt-1' });
    await expectOAuthError(refresh(env, 'spa', { refresh_token: response.refresh_token }), 'invalid_grant');
    await expectOAuthError(
      refresh(env, 'spa', { refresh_token: response.refresh_token }, { dpopJkt: 'jkt-2' }),
      'invalid_grant',
    );
    const next = await refresh(env, 'spa', { refresh_token: response.refresh_token }, { dpopJkt: 'jkt-1' });
    expect(next.token_type).toBe('DPoP');
    expect((await env.stores.refreshTokens.findRefreshToken(hashToken(next.refresh_token!)))?.dpopJkt).toBe(
      'jkt-1',
    );
  });

  it('a confidential client refresh token is not DPoP-bound', async () => {
    const { response } = await obtainTokens(env, { dpopJkt: 'jkt-1' });
    const next = await refresh(env, 'web', { refresh_token: response.refresh_token });
    expect(next.token_type).toBe('Bearer');
  });
});
