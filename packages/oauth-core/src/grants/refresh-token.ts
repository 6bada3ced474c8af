import { invalidGrant, invalidRequest, invalidScope, temporarilyUnavailable } from '../errors.js';
import { GRANT_TYPES, type User } from '../model.js';
import { parseScope, selectAccessTokenTarget } from '../scopes.js';
import type { ProtocolStores } from '../storage/index.js';
import { hashToken } from '../tokens/opaque.js';
import { refreshAbsoluteExpiry } from '../tokens/refresh-token.js';
import { prepareUserTokens } from './issue-tokens.js';
import { commitRefreshTokenRotation, findRefreshTokenWithGrantAndUser } from './redemption.js';
import { revokeReusedGrant } from './reuse.js';
import type { GrantEvents, GrantHandler, MintingDependencies } from './types.js';

/** What the refresh token grant uses. */
export interface RefreshTokenGrantDependencies extends MintingDependencies {
  stores: Pick<ProtocolStores, 'refreshTokens' | 'grants' | 'users' | 'resources' | 'transaction'>;
  /** `grantRevoked` when a rotated refresh token presented again revokes its grant. */
  events: GrantEvents;
  /**
   * Asks the source of an account kept elsewhere (a directory) whether it still stands: `ended`
   * (deleted or disabled there; the server has already revoked the user's grants and sessions) or
   * `unavailable` (no answer in time). Absent: every stored user stands.
   */
  accountStanding?: (user: User) => Promise<'active' | 'ended' | 'unavailable'>;
}

/**
 * RFC 6749 §6 with rotation on every use (RFC 9700 §4.14.2). Checks first; then mints the new
 * access token, a new refresh token (same grant, `parentHash` = the presented one) and an ID token
 * when `openid` was granted (OpenID Connect Core §12.2, without `nonce`); then, in one atomic unit,
 * marks the presented token used (conditional update: only one concurrent caller wins) and stores
 * what was minted. A loser's tokens were never stored or sent.
 */
export const refreshTokenGrant = {
  grantType: GRANT_TYPES.refreshToken,
  parameters: ['refresh_token', 'scope', 'resource'],
  repeatableParameters: ['resource'],
  async handle(request, deps) {
    const { client, params } = request;
    const { stores, clock } = deps;
    const now = clock.nowSeconds();
    if (params.refresh_token === undefined || params.refresh_token === '') {
      throw invalidRequest('refresh_token is required');
    }
    const requestedScopes = parseScope(params.scope);

    const tokenHash = hashToken(params.refresh_token);
    // The token, its grant and its user in one read where the store can (see grants/redemption.ts).
    const found = await findRefreshTokenWithGrantAndUser(stores, tokenHash);
    if (found === null) throw invalidGrant('unknown refresh token');
    const { token, grant } = found;
    // RFC 6749 §6: the refresh token must have been issued to the authenticated client.
    if (token.clientId !== client.clientId) throw invalidGrant('refresh token of another client');
    if (token.revokedAt !== null) throw invalidGrant('refresh token revoked');
    if (token.usedAt !== null) {
      // RFC 9700 §4.14.2: a rotated token presented again means one of the two parties holding it is
      // an attacker; revoke the whole chain (every refresh and access token of the grant).
      await revokeReusedGrant(
        deps,
        {
          reason: 'refresh_token_reused',
          grantType: GRANT_TYPES.refreshToken,
          grantId: token.grantId,
          clientId: token.clientId,
          sub: token.sub,
        },
        now,
      );
      throw invalidGrant('refresh token reused; grant revoked');
    }
    if (token.expiresAt <= now) throw invalidGrant('refresh token expired');
    if (grant === null || grant.revokedAt !== null) throw invalidGrant('grant revoked');
    if (refreshAbsoluteExpiry(grant, client) <= now) throw invalidGrant('grant past its absolute lifetime');
    // RFC 9449 §5: a DPoP-bound refresh token is only usable with a proof of the same key.
    if (token.dpopJkt !== null && token.dpopJkt !== request.dpopJkt) throw invalidGrant('DPoP key mismatch');
    // RFC 6749 §6: the scope may narrow, never widen, the original grant.
    const outOfGrant = requestedScopes.filter((scope) => !token.scopes.includes(scope));
    if (outOfGrant.length > 0) throw invalidScope('scope wider than the original grant');
    // Claims are re-read on every refresh; a deleted user ends the grant.
    const { user } = found;
    if (user === null) throw invalidGrant('user no longer exists');
    await checkAccountStanding(user, deps);
    const narrowed = requestedScopes.length > 0 ? requestedScopes : token.scopes;
    const scopes = narrowed.filter(
      (scope) => user.allowedScopes === null || user.allowedScopes.includes(scope),
    );
    const target = selectAccessTokenTarget({
      scopes,
      requestedResources: request.resources,
      boundResources: token.resources,
      resources: await stores.resources.listResources(),
    });

    // Mint first (no writes), then mark the presented token used and store its successor in one
    // atomic unit: only the single winner of the conditional update hands the tokens out.
    const { response, records } = await prepareUserTokens(
      {
        client,
        user,
        grant,
        scopes,
        target,
        dpopJkt: request.dpopJkt,
        // Every client rotates: the new token keeps the scope and binding of the old one, and
        // expires at min(absolute end, now + sliding).
        refreshToken: {
          scopes: token.scopes,
          resources: token.resources,
          parentHash: token.tokenHash,
          dpopJkt: token.dpopJkt,
        },
        idToken: scopes.includes('openid') ? { nonce: null } : null,
      },
      deps,
    );
    const won = await commitRefreshTokenRotation(stores, tokenHash, now, records);
    // A concurrent refresh with the same token won the conditional update.
    if (!won) throw invalidGrant('refresh token rotated concurrently');
    return response;
  },
} satisfies GrantHandler<RefreshTokenGrantDependencies>;

/**
 * RFC 6749 §6 lets the server refuse a refresh the resource owner no longer backs: an account
 * deleted or disabled at its source ends the grant (`invalid_grant`). With no answer from the
 * source the refresh fails closed, as a temporary error the client may retry (RFC 6749 §5.2 leaves
 * room for extension codes; `temporarily_unavailable` is the registered one, RFC 6749 §4.1.2.1).
 */
async function checkAccountStanding(user: User, deps: RefreshTokenGrantDependencies): Promise<void> {
  if (deps.accountStanding === undefined) return;
  const standing = await deps.accountStanding(user);
  if (standing === 'ended') throw invalidGrant('account deleted or disabled at its source');
  if (standing === 'unavailable') throw temporarilyUnavailable('account source unavailable at refresh');
}
