import { beforeEach, describe, expect, it } from 'vitest';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import type { TokenRequest } from '../src/grants/types.js';
import { createTestRandom } from '../src/testing.js';
import { hashToken } from '../src/tokens/opaque.js';
import { openSuccessorToken, sealSuccessorToken } from '../src/tokens/successor-seal.js';
import { createEnv, type Env, expectOAuthError, obtainTokens } from './harness.js';

const refresh = (
  env: Env,
  clientId: string,
  params: Record<string, string | undefined>,
  extra: Partial<TokenRequest> = {},
) =>
  env
    .tokenRequest(clientId, { grant_type: 'refresh_token', ...params }, extra)
    .then((request) => refreshTokenGrant.handle(request, env.context));

const INTERVAL = 30;

async function withInterval(env: Env, clientId: string, interval: number): Promise<void> {
  env.stores.seed({ clients: [{ ...(await env.client(clientId)), refreshTokenReuseInterval: interval }] });
}

async function grantRevokedAt(env: Env, grantId: string): Promise<number | null | undefined> {
  return (await env.stores.grants.findGrant(grantId))?.revokedAt;
}

describe('refresh_token grant with a reuse interval', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
    await withInterval(env, 'web', INTERVAL);
    await withInterval(env, 'spa', INTERVAL);
  });

  it.each([0, 1, INTERVAL])(
    'a retry %i s after the rotation gets the same successor and a fresh access token; the chain stays valid',
    async (delay) => {
      const { response: first, grantId } = await obtainTokens(env);
      const rotated = await refresh(env, 'web', { refresh_token: first.refresh_token });
      env.clock.advance(delay);
      const retried = await refresh(env, 'web', { refresh_token: first.refresh_token });

      expect(retried.refresh_token).toBe(rotated.refresh_token);
      expect(retried.access_token).not.toBe(rotated.access_token);
      expect(retried.id_token).toEqual(expect.any(String));
      expect(retried.scope).toBe(rotated.scope);
      expect(await grantRevokedAt(env, grantId)).toBeNull();
      // The successor is still the live end of the chain.
      const next = await refresh(env, 'web', { refresh_token: retried.refresh_token });
      expect(next.refresh_token).not.toBe(retried.refresh_token);
    },
  );

  it('answers every retry within the interval with the same successor (idempotent)', async () => {
    const { response: first } = await obtainTokens(env);
    const rotated = await refresh(env, 'web', { refresh_token: first.refresh_token });
    for (let retry = 0; retry < 3; retry += 1) {
      env.clock.advance(5);
      await expect(refresh(env, 'web', { refresh_token: first.refresh_token })).resolves.toMatchObject({
        refresh_token: rotated.refresh_token,
      });
    }
  });

  it('10 parallel refreshes with one token all succeed with the same successor', async () => {
    const { response: first } = await obtainTokens(env);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => refresh(env, 'web', { refresh_token: first.refresh_token })),
    );
    expect(new Set(results.map((result) => result.refresh_token)).size).toBe(1);
    expect(new Set(results.map((result) => result.access_token)).size).toBe(10);
  });

  it.each<[string, (env: Env, token: string) => Promise<unknown>]>([
    [
      'one second after the interval',
      (env, token) => {
        env.clock.advance(INTERVAL + 1);
        return refresh(env, 'web', { refresh_token: token });
      },
    ],
    [
      'from another client within the interval',
      (env, token) => refresh(env, 'spa', { refresh_token: token }),
    ],
  ])('reuse %s is refused and revokes the chain (RFC 9700 §4.14.2)', async (_name, reuse) => {
    const { response: first, grantId } = await obtainTokens(env);
    const rotated = await refresh(env, 'web', { refresh_token: first.refresh_token });
    await expectOAuthError(reuse(env, first.refresh_token!), 'invalid_grant');
    expect(await grantRevokedAt(env, grantId)).not.toBeNull();
    await expectOAuthError(refresh(env, 'web', { refresh_token: rotated.refresh_token }), 'invalid_grant');
  });

  it('a DPoP-bound token retried with the same key gets the successor; with another key it revokes', async () => {
    const { response: first, grantId } = await obtainTokens(env, { clientId: 'spa', dpopJkt: 'jkt-1' });
    const rotated = await refresh(env, 'spa', { refresh_token: first.refresh_token }, { dpopJkt: 'jkt-1' });
    const retried = await refresh(env, 'spa', { refresh_token: first.refresh_token }, { dpopJkt: 'jkt-1' });
    expect(retried).toMatchObject({ refresh_token: rotated.refresh_token, token_type: 'DPoP' });
    expect(await grantRevokedAt(env, grantId)).toBeNull();

    await expectOAuthError(
      refresh(env, 'spa', { refresh_token: first.refresh_token }, { dpopJkt: 'jkt-2' }),
      'invalid_grant',
    );
    expect(await grantRevokedAt(env, grantId)).not.toBeNull();
  });

  it('a retry after the successor itself was rotated is reuse: the chain moved on', async () => {
    const { response: first, grantId } = await obtainTokens(env);
    const rotated = await refresh(env, 'web', { refresh_token: first.refresh_token });
    await refresh(env, 'web', { refresh_token: rotated.refresh_token });
    await expectOAuthError(refresh(env, 'web', { refresh_token: first.refresh_token }), 'invalid_grant');
    expect(await grantRevokedAt(env, grantId)).not.toBeNull();
  });

  it('with interval 0 a retry right after the rotation revokes the chain, as strict rotation does', async () => {
    await withInterval(env, 'web', 0);
    const { response: first, grantId } = await obtainTokens(env);
    await refresh(env, 'web', { refresh_token: first.refresh_token });
    await expectOAuthError(refresh(env, 'web', { refresh_token: first.refresh_token }), 'invalid_grant');
    expect(await grantRevokedAt(env, grantId)).toBe(env.T0);
  });

  it('stores the successor only sealed under its parent, never in clear', async () => {
    const { response: first } = await obtainTokens(env);
    const rotated = await refresh(env, 'web', { refresh_token: first.refresh_token });
    const stored = await env.stores.refreshTokens.findRefreshToken(hashToken(rotated.refresh_token!));
    expect(stored?.sealedUnderParent).toEqual(expect.any(String));
    expect(JSON.stringify(stored)).not.toContain(rotated.refresh_token);
    expect(openSuccessorToken(first.refresh_token!, stored!.sealedUnderParent!)).toBe(rotated.refresh_token);
  });
});

describe('successor seal', () => {
  const random = createTestRandom('seal');

  it('opens only with the parent token it was sealed under', () => {
    const sealed = sealSuccessorToken('parent-token', 'successor-token', random);
    expect(openSuccessorToken('parent-token', sealed)).toBe('successor-token');
    expect(openSuccessorToken('another-token', sealed)).toBeNull();
  });

  it('refuses a tampered or truncated seal', () => {
    const sealed = Buffer.from(sealSuccessorToken('parent-token', 'successor-token', random), 'base64url');
    sealed[sealed.length - 1] = (sealed[sealed.length - 1] ?? 0) ^ 1;
    expect(openSuccessorToken('parent-token', sealed.toString('base64url'))).toBeNull();
    expect(openSuccessorToken('parent-token', sealed.subarray(0, 20).toString('base64url'))).toBeNull();
  });
});
