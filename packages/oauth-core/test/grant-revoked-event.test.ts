import { beforeEach, describe, expect, it } from 'vitest';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import type { GrantRevokedEvent } from '../src/grants/types.js';
import type { Grant } from '../src/model.js';
import { createEnv, type Env, expectOAuthError, obtainTokens, VERIFIER } from './harness.js';

const REDIRECT = 'https://app.example.test/cb';

/**
 * `events.grantRevoked` is how the server learns that reuse of a code or refresh token revoked a
 * grant (it audits `auth.token.reuse_detected` from it). It fires exactly when the grant revokes on
 * reuse, after the revocation is stored; never for a success, an ordinary failure or a lost race.
 * (The device grant's redeemed-code case is in device-flow.test.ts.)
 */
describe('events.grantRevoked', () => {
  let env: Env;
  /** The grant as the store held it at the moment each event was reported. */
  let grantWhenReported: Promise<Grant | null>[];
  let events: GrantRevokedEvent[];
  beforeEach(async () => {
    env = await createEnv();
    grantWhenReported = [];
    events = [];
    env.context.events = {
      grantRevoked: (event) => {
        events.push(event);
        // The memory store reads synchronously: this is the grant at the time of the call.
        grantWhenReported.push(env.stores.grants.findGrant(event.grantId));
      },
    };
  });

  const exchange = async (code: string, verifier = VERIFIER) =>
    authorizationCodeGrant.handle(
      await env.tokenRequest('web', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }),
      env.context,
    );
  const refresh = async (refreshToken: string | undefined) =>
    refreshTokenGrant.handle(
      await env.tokenRequest('web', { grant_type: 'refresh_token', refresh_token: refreshToken }),
      env.context,
    );

  it('fires once when an authorization code comes back (RFC 6749 §4.1.2), after the grant is revoked', async () => {
    const { code, grantId } = await env.seedCode();
    await exchange(code);
    expect(events).toEqual([]);
    env.clock.advance(3);

    await expectOAuthError(exchange(code), 'invalid_grant');

    expect(events).toEqual([
      {
        reason: 'authorization_code_reused',
        grantType: 'authorization_code',
        grantId,
        clientId: 'web',
        sub: 'u-alice',
      },
    ]);
    expect((await grantWhenReported[0])?.revokedAt).toBe(env.T0 + 3);
  });

  it('fires once when a rotated refresh token comes back (RFC 9700 §4.14.2), after the grant is revoked', async () => {
    const { response, grantId } = await obtainTokens(env);
    await refresh(response.refresh_token);
    expect(events).toEqual([]);
    env.clock.advance(4);

    await expectOAuthError(refresh(response.refresh_token), 'invalid_grant');

    expect(events).toEqual([
      {
        reason: 'refresh_token_reused',
        grantType: 'refresh_token',
        grantId,
        clientId: 'web',
        sub: 'u-alice',
      },
    ]);
    expect((await grantWhenReported[0])?.revokedAt).toBe(env.T0 + 4);
  });

  it('does not fire for successes or failures that revoke nothing', async () => {
    // A code and a refresh that succeed, twice over.
    const { response } = await obtainTokens(env);
    const rotated = await refresh(response.refresh_token);
    await refresh(rotated.refresh_token);
    // A wrong verifier, an unknown code, an expired code.
    const { code } = await env.seedCode();
    await expectOAuthError(exchange(code, 'b'.repeat(43)), 'invalid_grant');
    await expectOAuthError(exchange('unknown-code'), 'invalid_grant');
    env.clock.advance(60);
    await expectOAuthError(exchange(code), 'invalid_grant');
    // An unknown refresh token, and one whose grant was revoked elsewhere (logout, revocation).
    await expectOAuthError(refresh('unknown-refresh-token'), 'invalid_grant');
    const other = await obtainTokens(env);
    await env.stores.grants.revokeGrant(other.grantId, env.clock.nowSeconds());
    await expectOAuthError(refresh(other.response.refresh_token), 'invalid_grant');

    expect(events).toEqual([]);
  });

  it('does not fire for the losers of a race: they revoke nothing', async () => {
    const { code } = await env.seedCode();
    const codeResults = await Promise.allSettled(Array.from({ length: 5 }, () => exchange(code)));
    expect(codeResults.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const { response } = await obtainTokens(env);
    const refreshResults = await Promise.allSettled(
      Array.from({ length: 5 }, () => refresh(response.refresh_token)),
    );
    expect(refreshResults.filter((result) => result.status === 'fulfilled')).toHaveLength(1);

    expect(events).toEqual([]);
  });
});
