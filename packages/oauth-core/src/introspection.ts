import type { IntrospectionCaller } from './client-authentication.js';
import type { ProtocolConfig } from './config.js';
import type { Clock } from './runtime.js';
import { formatScope } from './scopes.js';
import type {
  AccessTokenStore,
  ClientStore,
  GrantStore,
  RefreshTokenStore,
  UserStore,
} from './storage/index.js';
import { hashToken } from './tokens/opaque.js';
import type { TokenVerifier } from './tokens/signer.js';
import {
  type ActiveAccessToken,
  findActiveAccessToken,
  looksLikeJwt,
} from './tokens/validate-access-token.js';

/** RFC 7662 §2.2. Inactive tokens are `{ active: false }` and nothing else. */
export interface IntrospectionResponse {
  active: boolean;
  scope?: string;
  client_id?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  iss?: string;
  jti?: string;
  /** `Bearer`, or `DPoP` for DPoP-bound access tokens; absent for refresh tokens. */
  token_type?: 'Bearer' | 'DPoP';
  username?: string;
  /** RFC 9449 §6.2: the bound key's thumbprint. */
  cnf?: { jkt: string };
  /** Resource claims copied from the user (e.g. `email`). */
  [claim: string]: unknown;
}

export interface IntrospectionContext {
  stores: {
    accessTokens: AccessTokenStore;
    grants: GrantStore;
    refreshTokens: RefreshTokenStore;
    clients: ClientStore;
    users: UserStore;
  };
  verifier: TokenVerifier;
  clock: Clock;
  config: ProtocolConfig;
}

const INACTIVE: IntrospectionResponse = Object.freeze({ active: false });

/** A token is addressed to a resource in its `aud`, and to a client that it was issued to. */
function addressedTo(token: ActiveAccessToken, caller: IntrospectionCaller): boolean {
  return caller.type === 'resource'
    ? token.audience.includes(caller.resource.id)
    : token.clientId === caller.client.clientId;
}

function accessTokenResponse(token: ActiveAccessToken, issuer: string): IntrospectionResponse {
  return {
    // Copied claims first: they can never overwrite a registered member.
    ...token.claims,
    active: true,
    scope: formatScope(token.scopes),
    client_id: token.clientId,
    sub: token.sub,
    aud: token.audience.length === 1 ? token.audience[0]! : token.audience,
    exp: token.expiresAt,
    iat: token.issuedAt,
    iss: issuer,
    ...(token.jti !== null ? { jti: token.jti } : {}),
    token_type: token.dpopJkt === null ? 'Bearer' : 'DPoP',
    ...(token.dpopJkt !== null ? { cnf: { jkt: token.dpopJkt } } : {}),
  };
}

/**
 * RFC 7662 token introspection for an authenticated caller (a resource, or a confidential client).
 * - Access tokens (JWT or opaque, see `findActiveAccessToken`): active only when unexpired,
 *   unrevoked (row, grant via `gid`, `jti` denylist) and addressed to the caller (`aud` holds the
 *   calling resource's id, or `client_id` is the calling client).
 * - Refresh tokens: active only for the client that owns them, unused, unrevoked, unexpired.
 * - `token_type_hint` (RFC 7662 §2.1) only orders the lookups; an unknown hint is ignored.
 * Anything else → `{ active: false }` (§2.2: no reason is given).
 */
export async function introspectToken(
  token: string,
  hint: string | null | undefined,
  caller: IntrospectionCaller,
  context: IntrospectionContext,
): Promise<IntrospectionResponse> {
  if (token === '') return INACTIVE;
  if (looksLikeJwt(token)) {
    const active = await findActiveAccessToken(token, context);
    return active !== null && addressedTo(active, caller)
      ? accessTokenResponse(active, context.config.issuer)
      : INACTIVE;
  }

  const asAccessToken = async (): Promise<IntrospectionResponse | null> => {
    const active = await findActiveAccessToken(token, context);
    if (active === null) return null;
    return addressedTo(active, caller) ? accessTokenResponse(active, context.config.issuer) : INACTIVE;
  };
  const asRefreshToken = async (): Promise<IntrospectionResponse | null> => {
    // Hashed here, not up front: an opaque access token (the usual case) is hashed by its own lookup.
    const row = await context.stores.refreshTokens.findRefreshToken(hashToken(token));
    if (row === null) return null;
    const now = context.clock.nowSeconds();
    const active = row.revokedAt === null && row.usedAt === null && row.expiresAt > now;
    // Only the client the refresh token was issued to may learn about it; resources never.
    if (!active || caller.type !== 'client' || caller.client.clientId !== row.clientId) return INACTIVE;
    // A user the registry no longer finds (disabled) has no active refresh token.
    if ((await context.stores.users.findUserBySub(row.sub)) === null) return INACTIVE;
    return {
      active: true,
      scope: formatScope(row.scopes),
      client_id: row.clientId,
      sub: row.sub,
      exp: row.expiresAt,
      iat: row.createdAt,
      iss: context.config.issuer,
    };
  };

  const order = hint === 'refresh_token' ? [asRefreshToken, asAccessToken] : [asAccessToken, asRefreshToken];
  for (const lookup of order) {
    const result = await lookup();
    if (result !== null) return result;
  }
  return INACTIVE;
}

/** RFC 9701 §4: the media type a resource asks for (`Accept`) and the answer carries. */
export const INTROSPECTION_JWT_MEDIA_TYPE = 'application/token-introspection+jwt';

/** Whether the `Accept` header asks for a JWT-secured introspection response (RFC 9701 §4). */
export function acceptsIntrospectionJwt(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept
    .split(',')
    .some((range) => range.split(';')[0]?.trim().toLowerCase() === INTROSPECTION_JWT_MEDIA_TYPE);
}

/**
 * RFC 9701 §5: the claims of the JWT-secured response: `iss` (this server), `aud` (the caller:
 * the resource's id or the client's client_id), `iat`, and the RFC 7662 answer as
 * `token_introspection`. Signed with `typ: token-introspection+jwt` by the caller.
 */
export function introspectionJwtClaims(
  response: IntrospectionResponse,
  context: { issuer: string; caller: IntrospectionCaller; now: number },
): Record<string, unknown> {
  const { caller } = context;
  return {
    iss: context.issuer,
    aud: caller.type === 'resource' ? caller.resource.id : caller.client.clientId,
    iat: context.now,
    token_introspection: response,
  };
}
