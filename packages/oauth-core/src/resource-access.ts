import { insufficientScope, invalidToken } from './errors.js';
import {
  type AccessTokenValidationContext,
  type ActiveAccessToken,
  findActiveAccessToken,
} from './tokens/validate-access-token.js';

/** What a protected resource of this server demands of an access token. */
export interface ResourceAccessRequirement {
  /** The resource identifier the token must be addressed to (RFC 8707 §2, RFC 9068 §4 `aud`). */
  resource: string;
  /** The scope this request needs (RFC 6750 §3.1 `insufficient_scope` names it). */
  scope: string;
  /**
   * The thumbprint of the key whose DPoP proof came with the request (RFC 9449 §7.1), `null` for
   * a bearer request.
   */
  dpopJkt: string | null;
}

/**
 * A protected resource of this server checking an access token it issued: active (see
 * `findActiveAccessToken`), bound to the proof's key when DPoP-bound (RFC 9449 §7.1; a bound token
 * sent as a bearer token is refused, §7.2), addressed to the resource (RFC 8707 §2: a token for
 * another audience is no token here, 401 `invalid_token`), and carrying the scope (403
 * `insufficient_scope`, RFC 6750 §3.1). Returns the token's state.
 */
export async function authorizeResourceAccess(
  accessToken: string,
  context: AccessTokenValidationContext,
  requirement: ResourceAccessRequirement,
): Promise<ActiveAccessToken> {
  if (accessToken === '') throw invalidToken('empty access token');
  const active = await findActiveAccessToken(accessToken, context);
  if (active === null) throw invalidToken('unknown, expired or revoked access token');
  if (active.dpopJkt !== requirement.dpopJkt) {
    throw invalidToken(
      active.dpopJkt === null
        ? 'DPoP proof with a token that is not DPoP-bound'
        : 'DPoP-bound token used without its key',
    );
  }
  if (!active.audience.includes(requirement.resource)) {
    throw invalidToken('access token for another resource');
  }
  if (!active.scopes.includes(requirement.scope)) {
    throw insufficientScope(requirement.scope, `access token without ${requirement.scope}`);
  }
  return active;
}
