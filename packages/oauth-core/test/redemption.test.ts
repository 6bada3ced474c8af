import { beforeEach, describe, expect, it } from 'vitest';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import type { TokenEndpointDependencies } from '../src/grants/index.js';
import { storeGrantWithCode } from '../src/grants/redemption.js';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import type { ProtocolStores } from '../src/storage/index.js';
import { hashToken } from '../src/tokens/opaque.js';
import { CHALLENGE, createEnv, type Env, expectOAuthError, VERIFIER } from './harness.js';

const REDIRECT = 'https://app.example.test/cb';

/**
 * The grants use a store's optional fast paths (one joined read, one atomic statement) when it has
 * them; the memory twin has them, so the grant tests run those. These run the same flows on stores
 * without them: the plain reads and the `transaction` fallback of grants/redemption.ts.
 */
function withoutFastPaths(stores: ProtocolStores): ProtocolStores {
  const {
    findRefreshTokenWithGrantAndUser: _findRefresh,
    rotateRefreshToken: _rotate,
    ...refreshTokens
  } = stores.refreshTokens;
  const {
    findAuthorizationCodeWithGrantAndUser: _findCode,
    redeemAuthorizationCode: _redeem,
    createAuthorizationCodeWithGrant: _createWithGrant,
    ...codes
  } = stores.codes;
  return { ...stores, refreshTokens, codes, transaction: (work) => stores.transaction(work) };
}

describe('code redemption and refresh rotation without the store fast paths', () => {
  let env: Env;
  let context: TokenEndpointDependencies;
  beforeEach(async () => {
    env = await createEnv();
    context = { ...env.context, stores: withoutFastPaths(env.stores) };
    expect(context.stores.refreshTokens.rotateRefreshToken).toBeUndefined();
    expect(context.stores.codes.redeemAuthorizationCode).toBeUndefined();
  });

  const exchange = async (code: string) =>
    authorizationCodeGrant.handle(
      await env.tokenRequest('web', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
      }),
      context,
    );
  const refresh = async (refreshToken: string | undefined) =>
    refreshTokenGrant.handle(
      await env.tokenRequest('web', { grant_type: 'refresh_token', refresh_token: refreshToken }),
      context,
    );

  it('exchanges a code, rotates the refresh token, and detects reuse', async () => {
    const { code, record } = await env.seedCode();
    expect(record.codeChallenge).toBe(CHALLENGE);
    const first = await exchange(code);
    expect((await env.stores.codes.findAuthorizationCode(hashToken(code)))?.usedAt).toBe(env.T0);
    expect(await env.stores.refreshTokens.findRefreshToken(hashToken(first.refresh_token!))).not.toBeNull();

    const second = await refresh(first.refresh_token);
    const next = await env.stores.refreshTokens.findRefreshToken(hashToken(second.refresh_token!));
    expect(next?.parentHash).toBe(hashToken(first.refresh_token!));

    await expectOAuthError(refresh(first.refresh_token), 'invalid_grant');
    expect(
      (await env.stores.refreshTokens.findRefreshToken(hashToken(second.refresh_token!)))?.revokedAt,
    ).toBe(env.T0);
  });

  it('10 concurrent exchanges of one code: one success, invalid_grant for the rest', async () => {
    const { code } = await env.seedCode();
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => exchange(code)));
    const fulfilled = results.filter((result) => result.status === 'fulfilled');
    expect(fulfilled).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason.code).toBe('invalid_grant');
    }
  });

  it('10 concurrent refreshes of one token: one success; the winner keeps a working chain', async () => {
    const { code } = await env.seedCode();
    const first = await exchange(code);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => refresh(first.refresh_token)));
    const winners = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    expect(winners).toHaveLength(1);
    await expect(refresh(winners[0]!.refresh_token)).resolves.toBeTruthy();
  });

  it('stores a new grant with its code in a transaction: both, or neither when the code fails', async () => {
    const { record } = await env.seedCode();
    const grant = { ...(await env.stores.grants.findGrant(record.grantId))!, id: 'grant-fallback' };
    const code = { ...record, codeHash: 'fallback-code-hash', grantId: grant.id };
    await storeGrantWithCode(context.stores, grant, code);
    expect(await env.stores.grants.findGrant(grant.id)).toEqual(grant);
    expect(await env.stores.codes.findAuthorizationCode(code.codeHash)).toEqual(code);

    const orphan = { ...grant, id: 'grant-orphan' };
    await expect(
      storeGrantWithCode(context.stores, orphan, { ...code, grantId: orphan.id }),
    ).rejects.toThrow();
    expect(await env.stores.grants.findGrant(orphan.id)).toBeNull();
  });
});
