import { scopedUserClaims } from './claims.js';
import type { ProtocolConfig } from './config.js';
import { insufficientScope, invalidToken } from './errors.js';
import type { Clock } from './runtime.js';
import type { AccessTokenStore, ClientStore, GrantStore, UserStore } from './storage/index.js';
import type { TokenVerifier } from './tokens/signer.js';
import { findActiveAccessToken } from './tokens/validate-access-token.js';

export interface UserInfoContext {
  stores: { accessTokens: AccessTokenStore; grants: GrantStore; clients: ClientStore; users: UserStore };
  verifier: TokenVerifier;
  clock: Clock;
  config: ProtocolConfig;
}

/**
 * OpenID Connect Core §5.3 UserInfo for the bearer access token (already taken from the
 * `Authorization` header by the server). Any active access token of this server carrying `openid`
 * is accepted, whatever its `aud`: the sign-in access token is usually addressed to the client's
 * API. Claims by scope: `sub` always; `profile` → `name`; `email` → `email`, `email_verified`.
 *
 * Errors (RFC 6750 §3.1), each with `WWW-Authenticate: Bearer error="…"` in `headers`:
 * unknown, expired or revoked token, a DPoP-bound token without its key, or a user that no longer
 * exists → `invalid_token` (401); no `openid` scope → `insufficient_scope` (403).
 */
export async function resolveUserInfo(
  accessToken: string,
  context: UserInfoContext,
  options: { dpopJkt?: string | null } = {},
): Promise<Record<string, unknown>> {
  if (accessToken === '') throw invalidToken('empty access token');
  const active = await findActiveAccessToken(accessToken, context);
  if (active === null) throw invalidToken('unknown, expired or revoked access token');
  // RFC 9449 §7.1: a DPoP-bound token is only usable with a proof of its key.
  if (active.dpopJkt !== null && active.dpopJkt !== (options.dpopJkt ?? null)) {
    throw invalidToken('DPoP-bound token used without its key');
  }
  if (!active.scopes.includes('openid')) throw insufficientScope('openid', 'access token without openid');
  const user = await context.stores.users.findUserBySub(active.sub);
  if (user === null) throw invalidToken('user no longer exists');
  return { sub: user.sub, ...scopedUserClaims(user, active.scopes) };
}
