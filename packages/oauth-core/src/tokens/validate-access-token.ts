import type { JWTPayload } from 'jose';
import type { ProtocolConfig } from '../config.js';
import type { OpaqueAccessToken, User } from '../model.js';
import type { Clock } from '../runtime.js';
import { parseScope } from '../scopes.js';
import type { AccessTokenStore, ClientStore, GrantStore, UserStore } from '../storage/index.js';
import { hashToken } from './opaque.js';
import type { TokenVerifier } from './signer.js';

/** An access token this server issued that is active now, in one shape for both formats. */
export interface ActiveAccessToken {
  format: 'jwt' | 'opaque';
  clientId: string;
  sub: string;
  scopes: string[];
  audience: string[];
  issuedAt: number;
  expiresAt: number;
  /** JWT `jti`; `null` for opaque tokens. */
  jti: string | null;
  /** `null` for client_credentials tokens. */
  grantId: string | null;
  dpopJkt: string | null;
  /** Copied user claims (`Resource.claims`). */
  claims: Record<string, unknown>;
}

export interface AccessTokenValidationContext {
  stores: {
    accessTokens: AccessTokenStore;
    grants: GrantStore;
    /** A token of a client the registry no longer finds (disabled) is inactive. */
    clients: ClientStore;
    /** A user token whose user the registry no longer finds (disabled) is inactive. */
    users: UserStore;
  };
  verifier: TokenVerifier;
  clock: Clock;
  config: ProtocolConfig;
}

/** A compact JWS has three base64url parts; opaque tokens are one base64url string. */
export const looksLikeJwt = (token: string): boolean => token.split('.').length === 3;

const REGISTERED = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'scope',
  'gid',
  'cnf',
]);

function jwtToActive(payload: JWTPayload): ActiveAccessToken | null {
  const { sub, exp, iat, jti, aud } = payload;
  const clientId = payload.client_id;
  const scope = payload.scope;
  if (typeof sub !== 'string' || typeof exp !== 'number' || typeof jti !== 'string') return null;
  if (typeof clientId !== 'string' || (scope !== undefined && typeof scope !== 'string')) return null;
  const audience = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  const claims: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) if (!REGISTERED.has(key)) claims[key] = value;
  return {
    format: 'jwt',
    clientId,
    sub,
    scopes: parseScope(scope),
    audience,
    issuedAt: typeof iat === 'number' ? iat : exp,
    expiresAt: exp,
    jti,
    grantId: typeof payload.gid === 'string' ? payload.gid : null,
    dpopJkt: typeof cnf?.jkt === 'string' ? cnf.jkt : null,
    claims,
  };
}

/**
 * Resolves an access token to its active state, or `null` when it is unknown, malformed, expired or
 * revoked, or when its client or user is no longer in the registry (removed from the seed file:
 * disabled). JWTs (RFC 9068): signature and `typ` by the `TokenVerifier`, `iss`, expiry by our clock,
 * the grant (via `gid`) not revoked, the `jti` not denylisted. Opaque tokens: the stored row, not
 * revoked (revoking a grant revokes its rows), not expired.
 */
export async function findActiveAccessToken(
  token: string,
  context: AccessTokenValidationContext,
): Promise<ActiveAccessToken | null> {
  return (await findActiveAccessTokenAndUser(token, context))?.active ?? null;
}

/**
 * `findActiveAccessToken`, with the user the check found enabled (`null` for a client's own
 * token): UserInfo answers from it instead of reading the account a second time.
 */
export async function findActiveAccessTokenAndUser(
  token: string,
  context: AccessTokenValidationContext,
): Promise<{ active: ActiveAccessToken; user: User | null } | null> {
  const now = context.clock.nowSeconds();
  if (looksLikeJwt(token)) {
    let payload: JWTPayload;
    try {
      payload = await context.verifier.verify(token, { typ: 'at+jwt' });
    } catch {
      return null;
    }
    if (payload.iss !== context.config.issuer) return null;
    let active: ActiveAccessToken | null;
    try {
      active = jwtToActive(payload);
    } catch {
      return null;
    }
    if (active === null || active.expiresAt <= now) return null;
    if (active.grantId !== null) {
      const grant = await context.stores.grants.findGrant(active.grantId);
      if (grant === null || grant.revokedAt !== null) return null;
    }
    if (await context.stores.accessTokens.isJwtAccessTokenRevoked(active.jti!)) return null;
    return withEnabledParties(active, context);
  }
  const found = await findAccessTokenWithUser(context.stores.accessTokens, hashToken(token));
  if (found === null) return null;
  const row = found.token;
  if (row.revokedAt !== null || row.expiresAt <= now) return null;
  const active: ActiveAccessToken = {
    format: 'opaque',
    clientId: row.clientId,
    sub: row.sub,
    scopes: [...row.scopes],
    audience: [...row.audience],
    issuedAt: row.issuedAt,
    expiresAt: row.expiresAt,
    jti: null,
    grantId: row.grantId,
    dpopJkt: row.dpopJkt,
    claims: { ...row.claims },
  };
  return withEnabledParties(active, context, found.user);
}

/**
 * The stored token with its user in one read where the store can (`findAccessTokenWithUser`);
 * otherwise the token alone, its user `undefined`: `withEnabledParties` then reads it.
 */
async function findAccessTokenWithUser(
  store: AccessTokenStore,
  tokenHash: string,
): Promise<{ token: OpaqueAccessToken; user?: User | null } | null> {
  if (store.findAccessTokenWithUser) return store.findAccessTokenWithUser(tokenHash);
  const token = await store.findAccessToken(tokenHash);
  return token === null ? null : { token };
}

/**
 * The token's client is still registered, and so is its user when it has one (a user grant's
 * token; a client_credentials token's `sub` is the client itself). The registry lookups skip
 * disabled entries, so this is where a disabled client's or user's tokens stop working.
 */
async function withEnabledParties(
  active: ActiveAccessToken,
  context: AccessTokenValidationContext,
  /** The user as already read with the token (`null`: none enabled); `undefined`: not read yet. */
  knownUser?: User | null,
): Promise<{ active: ActiveAccessToken; user: User | null } | null> {
  if ((await context.stores.clients.findClient(active.clientId)) === null) return null;
  const clientOwnToken = active.grantId === null && active.sub === active.clientId;
  if (clientOwnToken) return { active, user: null };
  const user = knownUser !== undefined ? knownUser : await context.stores.users.findUserBySub(active.sub);
  return user === null ? null : { active, user };
}
