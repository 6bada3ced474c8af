import { type Client, GRANT_TYPES, type Grant, type RefreshToken } from '../model.js';
import type { Clock, RandomSource } from '../runtime.js';
import type { RefreshTokenStore } from '../storage/index.js';
import { generateOpaqueToken, hashToken } from './opaque.js';

/**
 * Refresh tokens are issued only to clients allowed the `refresh_token` grant, and only when
 * `offline_access` was granted (OpenID Connect Core §11) or the client is configured to get them
 * without it (`refreshTokensWithoutOfflineAccess`).
 */
export function shouldIssueRefreshToken(
  client: Pick<Client, 'grantTypes' | 'refreshTokensWithoutOfflineAccess'>,
  scopes: readonly string[],
): boolean {
  if (!client.grantTypes.includes(GRANT_TYPES.refreshToken)) return false;
  return scopes.includes('offline_access') || client.refreshTokensWithoutOfflineAccess;
}

/** End of the grant's absolute refresh lifetime (from the grant's creation). */
export function refreshAbsoluteExpiry(
  grant: Pick<Grant, 'createdAt'>,
  client: Pick<Client, 'refreshTokenAbsoluteTtl'>,
): number {
  return grant.createdAt + client.refreshTokenAbsoluteTtl;
}

/** `min(absolute end, now + sliding)`: a rotated token never outlives the grant's absolute lifetime. */
export function refreshTokenExpiry(
  grant: Pick<Grant, 'createdAt'>,
  client: Pick<Client, 'refreshTokenAbsoluteTtl' | 'refreshTokenSlidingTtl'>,
  now: number,
): number {
  return Math.min(refreshAbsoluteExpiry(grant, client), now + client.refreshTokenSlidingTtl);
}

export interface RefreshTokenInput {
  grant: Pick<Grant, 'id' | 'sub' | 'createdAt'>;
  client: Pick<Client, 'clientId' | 'refreshTokenAbsoluteTtl' | 'refreshTokenSlidingTtl'>;
  scopes: readonly string[];
  resources: readonly string[];
  /** The token this one replaces (rotation), or `null` for the first of the grant. */
  parentHash: string | null;
  dpopJkt?: string | null;
}

export interface RefreshTokenContext {
  /** Pass the transaction's store when issuing inside one. */
  refreshTokens: Pick<RefreshTokenStore, 'createRefreshToken'>;
  clock: Clock;
  random: RandomSource;
}

/** Mints a refresh token (256 random bits), stores its hash, returns the clear value. */
export async function issueRefreshToken(
  input: RefreshTokenInput,
  context: RefreshTokenContext,
): Promise<{ token: string; record: RefreshToken }> {
  const now = context.clock.nowSeconds();
  const token = generateOpaqueToken(context.random);
  const record: RefreshToken = {
    tokenHash: hashToken(token),
    grantId: input.grant.id,
    clientId: input.client.clientId,
    sub: input.grant.sub,
    scopes: [...input.scopes],
    resources: [...input.resources],
    parentHash: input.parentHash,
    createdAt: now,
    expiresAt: refreshTokenExpiry(input.grant, input.client, now),
    usedAt: null,
    revokedAt: null,
    dpopJkt: input.dpopJkt ?? null,
  };
  await context.refreshTokens.createRefreshToken(record);
  return { token, record };
}
