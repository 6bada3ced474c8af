import { consentedResourceClaims } from '../claims.js';
import type { ProtocolConfig } from '../config.js';
import { generateUuid } from '../ids.js';
import type { Client, Resource, User } from '../model.js';
import type { Clock, RandomSource } from '../runtime.js';
import { accessTokenScopes, formatScope } from '../scopes.js';
import type { AccessTokenStore } from '../storage/index.js';
import { generateOpaqueToken, hashToken } from './opaque.js';
import type { TokenSigner } from './signer.js';

export interface AccessTokenInput {
  client: Pick<Client, 'clientId'>;
  /** The user, or the client id for client_credentials. */
  sub: string;
  /** `null` for client_credentials tokens, which belong to no user grant. */
  grantId: string | null;
  /** Scopes granted; the token keeps the OIDC ones and `resource`'s (see `accessTokenScopes`). */
  scopes: readonly string[];
  /** The audience; `null` → opaque token addressed to the issuer (UserInfo only). */
  resource: Resource | null;
  /** Source of `Resource.claims`; `null` for client_credentials. */
  user: User | null;
  /** OIDC `auth_time` of the grant, copied into JWTs (RFC 9068 §2.2.1). */
  authTime?: number | null;
  /** RFC 9449 §6: thumbprint of the DPoP key the token is bound to. */
  dpopJkt?: string | null;
  /** RFC 8693 §4.1: the acting party of a delegated token (token exchange with an actor token). */
  act?: Readonly<Record<string, unknown>> | null;
}

export interface AccessTokenContext {
  /** Where opaque tokens are written: pass the transaction's store when issuing inside one. */
  accessTokens: Pick<AccessTokenStore, 'createAccessToken'>;
  clock: Clock;
  random: RandomSource;
  signer: TokenSigner;
  config: ProtocolConfig;
}

export interface IssuedAccessToken {
  token: string;
  format: 'jwt' | 'opaque';
  tokenType: 'Bearer' | 'DPoP';
  expiresIn: number;
  expiresAt: number;
  audience: string[];
  scopes: string[];
  /** The JWT `jti`; `null` for opaque tokens. */
  jti: string | null;
}

/**
 * Issues one access token.
 * - For a resource with `accessTokenFormat: 'jwt'`: an RFC 9068 JWT (`typ: at+jwt`, §2.1) with iss,
 *   sub, aud, client_id, scope, exp, iat, jti (§2.2), `auth_time` when known, the resource's user
 *   claims that the granted scopes cover (`consentedResourceClaims`), the private claim `gid` (grant id, so introspection sees the grant revoked) and
 *   `cnf.jkt` when DPoP-bound (RFC 9449 §6.1).
 * - Otherwise (opaque resource, or no resource: aud = issuer, `config.defaultAccessTokenTtl`):
 *   256 random bits, stored only as `hashToken(token)` with the claims kept for introspection.
 */
export async function issueAccessToken(
  input: AccessTokenInput,
  context: AccessTokenContext,
): Promise<IssuedAccessToken> {
  const now = context.clock.nowSeconds();
  const { resource } = input;
  const scopes = accessTokenScopes(input.scopes, resource);
  const expiresIn = resource === null ? context.config.defaultAccessTokenTtl : resource.accessTokenTtl;
  const expiresAt = now + expiresIn;
  const audience = resource === null ? [context.config.issuer] : [resource.id];
  const userClaims =
    input.user !== null && resource !== null
      ? consentedResourceClaims(input.user, resource.claims, input.scopes)
      : {};
  // `act` travels with the copied claims, so opaque tokens report it at introspection too.
  const claims = input.act != null ? { ...userClaims, act: input.act } : userClaims;
  const dpopJkt = input.dpopJkt ?? null;
  const tokenType = dpopJkt === null ? 'Bearer' : 'DPoP';

  if (resource !== null && resource.accessTokenFormat === 'jwt') {
    const jti = generateUuid(context.random);
    const token = await context.signer.sign(
      {
        // Copied user claims first, so they can never overwrite a registered claim.
        ...userClaims,
        iss: context.config.issuer,
        sub: input.sub,
        aud: resource.id,
        client_id: input.client.clientId,
        scope: formatScope(scopes),
        iat: now,
        exp: expiresAt,
        jti,
        ...(input.authTime != null ? { auth_time: input.authTime } : {}),
        ...(input.grantId !== null ? { gid: input.grantId } : {}),
        ...(dpopJkt !== null ? { cnf: { jkt: dpopJkt } } : {}),
        ...(input.act != null ? { act: input.act } : {}),
      },
      { alg: resource.accessTokenSigningAlg, typ: 'at+jwt' },
    );
    return { token, format: 'jwt', tokenType, expiresIn, expiresAt, audience, scopes, jti };
  }

  const token = generateOpaqueToken(context.random);
  await context.accessTokens.createAccessToken({
    tokenHash: hashToken(token),
    grantId: input.grantId,
    clientId: input.client.clientId,
    sub: input.sub,
    scopes,
    audience,
    issuedAt: now,
    expiresAt,
    revokedAt: null,
    dpopJkt,
    claims,
  });
  return { token, format: 'opaque', tokenType, expiresIn, expiresAt, audience, scopes, jti: null };
}
