import { invalidGrant, invalidRequest, invalidScope, temporarilyUnavailable } from '../errors.js';
import {
  type Client,
  GRANT_TYPES,
  type Grant,
  type RefreshToken,
  type TokenResponse,
  type User,
} from '../model.js';
import { type AccessTokenTarget, formatScope, parseScope, selectAccessTokenTarget } from '../scopes.js';
import type { IssuedTokenRecords, ProtocolStores, RefreshTokenWithGrantAndUser } from '../storage/index.js';
import { hashToken } from '../tokens/opaque.js';
import { refreshAbsoluteExpiry } from '../tokens/refresh-token.js';
import { openSuccessorToken, sealSuccessorToken } from '../tokens/successor-seal.js';
import { prepareUserTokens, responseScopes } from './issue-tokens.js';
import { commitRefreshTokenRotation, findRefreshTokenWithGrantAndUser } from './redemption.js';
import { revokeReusedGrant } from './reuse.js';
import type { GrantEvents, GrantHandler, MintingDependencies, TokenRequest } from './types.js';

/** What the refresh token grant uses. */
export interface RefreshTokenGrantDependencies extends MintingDependencies {
  stores: Pick<
    ProtocolStores,
    'refreshTokens' | 'accessTokens' | 'grants' | 'users' | 'resources' | 'transaction'
  >;
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
 * what was minted. A loser's tokens were never stored or sent. A client with a
 * `refresh_token_reuse_interval` gets the same successor again when it retries within it.
 */
export const refreshTokenGrant = {
  grantType: GRANT_TYPES.refreshToken,
  parameters: ['refresh_token', 'scope', 'resource'],
  repeatableParameters: ['resource'],
  async handle(request, deps) {
    const { client, params } = request;
    const { stores, clock } = deps;
    const now = clock.nowSeconds();
    const presented = params.refresh_token;
    if (presented === undefined || presented === '') throw invalidRequest('refresh_token is required');
    const requestedScopes = parseScope(params.scope);

    const tokenHash = hashToken(presented);
    // The token, its grant and its user in one read where the store can (see grants/redemption.ts).
    const found = await findRefreshTokenWithGrantAndUser(stores, tokenHash);
    if (found === null) throw invalidGrant('unknown refresh token');
    const { token } = found;
    if (token.revokedAt !== null) throw invalidGrant('refresh token revoked');
    if (token.usedAt !== null && !isRetryWithinReuseInterval(token, request, now)) {
      await revokeReusedChain(token, deps, now);
    }
    // RFC 6749 §6: the refresh token must have been issued to the authenticated client.
    if (token.clientId !== client.clientId) throw invalidGrant('refresh token of another client');
    const checked = await checkRefresh(found, request, requestedScopes, deps, now);
    if (token.usedAt !== null) return answerRetriedRefresh(presented, token, checked, request, deps, now);

    // Mint first (no writes), then mark the presented token used and store its successor in one
    // atomic unit: only the single winner of the conditional update hands the tokens out.
    const { response, records } = await prepareUserTokens(
      {
        ...checked,
        client,
        dpopJkt: request.dpopJkt,
        // Every client rotates: the new token keeps the scope and binding of the old one, and
        // expires at min(absolute end, now + sliding).
        refreshToken: {
          scopes: token.scopes,
          resources: token.resources,
          parentHash: token.tokenHash,
          dpopJkt: token.dpopJkt,
        },
        idToken: checked.scopes.includes('openid') ? { nonce: null } : null,
      },
      deps,
    );
    const stored = sealForRetries(records, presented, response.refresh_token, client, deps);
    if (await commitRefreshTokenRotation(stores, tokenHash, now, stored)) return response;
    // A concurrent refresh with the same token won the conditional update. Within the reuse
    // interval this is the retry the interval exists for (two tabs, a client retrying a slow
    // answer): answer with the winner's successor.
    const rotated = reuseInterval(client) > 0 ? await stores.refreshTokens.findRefreshToken(tokenHash) : null;
    if (rotated !== null && rotated.usedAt !== null && isRetryWithinReuseInterval(rotated, request, now)) {
      return answerRetriedRefresh(presented, rotated, checked, request, deps, now);
    }
    throw invalidGrant('refresh token rotated concurrently');
  },
} satisfies GrantHandler<RefreshTokenGrantDependencies>;

/** What the checks of a refresh settle: the grant, the user, the scopes and the access token's target. */
interface CheckedRefresh {
  grant: Grant;
  user: User;
  scopes: string[];
  target: AccessTokenTarget;
}

/**
 * Every check of a refresh after the token's own state (RFC 6749 §6): expiry, the grant and its
 * lifetime, the DPoP binding, the requested scope, the user and the account's standing; then the
 * scopes and the access token's audience.
 */
async function checkRefresh(
  found: RefreshTokenWithGrantAndUser,
  request: TokenRequest,
  requestedScopes: string[],
  deps: RefreshTokenGrantDependencies,
  now: number,
): Promise<CheckedRefresh> {
  const { token, grant, user } = found;
  const { client } = request;
  if (token.expiresAt <= now) throw invalidGrant('refresh token expired');
  if (grant === null || grant.revokedAt !== null) throw invalidGrant('grant revoked');
  if (refreshAbsoluteExpiry(grant, client) <= now) throw invalidGrant('grant past its absolute lifetime');
  // RFC 9449 §5: a DPoP-bound refresh token is only usable with a proof of the same key.
  if (token.dpopJkt !== null && token.dpopJkt !== request.dpopJkt) throw invalidGrant('DPoP key mismatch');
  // RFC 6749 §6: the scope may narrow, never widen, the original grant.
  const outOfGrant = requestedScopes.filter((scope) => !token.scopes.includes(scope));
  if (outOfGrant.length > 0) throw invalidScope('scope wider than the original grant');
  // Claims are re-read on every refresh; a deleted user ends the grant.
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
    resources: await deps.stores.resources.listResources(),
  });
  return { grant, user, scopes, target };
}

function reuseInterval(client: Client): number {
  return client.refreshTokenReuseInterval ?? 0;
}

/**
 * RFC 9700 §4.14.2 lets a server tolerate a retry: a used token presented again by the client it
 * was issued to, with the same DPoP key when it is bound (RFC 9449 §5), no more than the client's
 * `refresh_token_reuse_interval` seconds after its rotation. Anything else is reuse.
 */
function isRetryWithinReuseInterval(token: RefreshToken, request: TokenRequest, now: number): boolean {
  const interval = reuseInterval(request.client);
  if (interval <= 0 || token.usedAt === null || now - token.usedAt > interval) return false;
  if (token.clientId !== request.client.clientId) return false;
  return token.dpopJkt === null || token.dpopJkt === request.dpopJkt;
}

/**
 * RFC 9700 §4.14.2: a rotated token presented again means one of the two parties holding it is an
 * attacker; revoke the whole chain (every refresh and access token of the grant).
 */
async function revokeReusedChain(
  token: RefreshToken,
  deps: RefreshTokenGrantDependencies,
  now: number,
): Promise<never> {
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

/**
 * With a reuse interval the successor's record carries its value sealed under the presented token
 * (`tokens/successor-seal.ts`), so any instance can hand the same successor to a retry.
 */
function sealForRetries(
  records: IssuedTokenRecords,
  presented: string,
  successor: string | undefined,
  client: Client,
  deps: RefreshTokenGrantDependencies,
): IssuedTokenRecords {
  if (reuseInterval(client) <= 0 || records.refreshToken === null || successor === undefined) return records;
  const sealedUnderParent = sealSuccessorToken(presented, successor, deps.random);
  return { ...records, refreshToken: { ...records.refreshToken, sealedUnderParent } };
}

/**
 * A retry within the reuse interval: the same successor refresh token as the rotation answered,
 * with a fresh access token (and ID token). The successor must still be the live end of the chain;
 * if it was used or revoked since, or cannot be opened, the chain has moved on without this
 * caller, which is reuse (RFC 9700 §4.14.2).
 */
async function answerRetriedRefresh(
  presented: string,
  token: RefreshToken,
  checked: CheckedRefresh,
  request: TokenRequest,
  deps: RefreshTokenGrantDependencies,
  now: number,
): Promise<TokenResponse> {
  const successor = await deps.stores.refreshTokens.findRefreshTokenSuccessor(token.tokenHash);
  const live = successor !== null && successor.usedAt === null && successor.revokedAt === null;
  const value =
    live && successor.sealedUnderParent !== undefined
      ? openSuccessorToken(presented, successor.sealedUnderParent)
      : null;
  if (value === null || hashToken(value) !== successor?.tokenHash) return revokeReusedChain(token, deps, now);
  const { response, records } = await prepareUserTokens(
    {
      ...checked,
      client: request.client,
      dpopJkt: request.dpopJkt,
      refreshToken: null,
      idToken: checked.scopes.includes('openid') ? { nonce: null } : null,
    },
    deps,
  );
  if (records.accessToken !== null) await deps.stores.accessTokens.createAccessToken(records.accessToken);
  return { ...response, refresh_token: value, scope: formatScope(responseScopes(checked.scopes, true)) };
}

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
