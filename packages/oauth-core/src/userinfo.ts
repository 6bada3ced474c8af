import { scopedUserClaims } from './claims.js';
import type { ProtocolConfig } from './config.js';
import { insufficientScope, invalidToken } from './errors.js';
import type { Client } from './model.js';
import type { Clock } from './runtime.js';
import type { AccessTokenStore, ClientStore, GrantStore, UserStore } from './storage/index.js';
import type { TokenSigner, TokenVerifier } from './tokens/signer.js';
import { findActiveAccessTokenAndUser } from './tokens/validate-access-token.js';

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
  return (await resolveUserInfoOfClient(accessToken, context, options)).claims;
}

/** `resolveUserInfo`'s claims, with the client the access token was issued to (for `aud`). */
export interface ClientUserInfo {
  claims: Record<string, unknown>;
  clientId: string;
}

/** As `resolveUserInfo`, also naming the token's client, whose registration decides the format. */
export async function resolveUserInfoOfClient(
  accessToken: string,
  context: UserInfoContext,
  options: { dpopJkt?: string | null } = {},
): Promise<ClientUserInfo> {
  if (accessToken === '') throw invalidToken('empty access token');
  const found = await findActiveAccessTokenAndUser(accessToken, context);
  if (found === null) throw invalidToken('unknown, expired or revoked access token');
  const { active } = found;
  // RFC 9449 §7.1: a DPoP-bound token is only usable with a proof of its key.
  if (active.dpopJkt !== null && active.dpopJkt !== (options.dpopJkt ?? null)) {
    throw invalidToken('DPoP-bound token used without its key');
  }
  if (!active.scopes.includes('openid')) throw insufficientScope('openid', 'access token without openid');
  // A client's own token (client credentials) names no user: UserInfo has nobody to describe.
  const user = found.user;
  if (user === null) throw invalidToken('user no longer exists');
  return { claims: { sub: user.sub, ...scopedUserClaims(user, active.scopes) }, clientId: active.clientId };
}

/** The UserInfo response body and its media type. */
export type UserInfoResponse =
  | { contentType: 'application/json'; body: Record<string, unknown> }
  | { contentType: 'application/jwt'; body: string };

/**
 * OpenID Connect Core §5.3.2: plain JSON, unless the client registered `userinfo_signed_response_alg`;
 * then "the UserInfo Response MUST be encoded as a JWT" (`Content-Type: application/jwt`) signed with
 * the server's current key of that algorithm, and "SHOULD contain the Claims iss [...] and aud",
 * `aud` being the client's `client_id`.
 */
export async function userInfoResponse(
  userInfo: ClientUserInfo,
  client: Pick<Client, 'userinfoSignedResponseAlg'> | null,
  context: { signer: TokenSigner; config: Pick<ProtocolConfig, 'issuer'> },
): Promise<UserInfoResponse> {
  const alg = client?.userinfoSignedResponseAlg ?? null;
  if (alg === null) return { contentType: 'application/json', body: userInfo.claims };
  const claims = { ...userInfo.claims, iss: context.config.issuer, aud: userInfo.clientId };
  return { contentType: 'application/jwt', body: await context.signer.sign(claims, { alg, typ: 'JWT' }) };
}
