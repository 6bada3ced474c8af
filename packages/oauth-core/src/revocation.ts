import type { ProtocolConfig } from './config.js';
import type { Client } from './model.js';
import type { Clock } from './runtime.js';
import type { AccessTokenStore, GrantStore, RefreshTokenStore } from './storage/index.js';
import { hashToken } from './tokens/opaque.js';
import type { TokenVerifier } from './tokens/signer.js';
import { looksLikeJwt } from './tokens/validate-access-token.js';

export interface RevocationContext {
  stores: { accessTokens: AccessTokenStore; grants: GrantStore; refreshTokens: RefreshTokenStore };
  verifier: TokenVerifier;
  clock: Clock;
  config: ProtocolConfig;
}

/**
 * RFC 7009 token revocation for an authenticated client. Never reports whether anything was revoked:
 * - refresh token of this client → `revokeGrant` (§2.1: the server SHOULD also invalidate the access
 *   tokens of the same grant; JWTs of the grant go inactive through `gid`);
 * - opaque access token of this client → that token only;
 * - JWT access token (RFC 9068) of this client → its `jti` is denylisted until `exp`;
 * - unknown tokens, tokens of other clients, malformed values → nothing (§2.2: 200 all the same).
 * `token_type_hint` only orders the lookups (§2.1: an unusable hint extends the search).
 */
export async function revokeToken(
  token: string,
  hint: string | null | undefined,
  client: Pick<Client, 'clientId'>,
  context: RevocationContext,
): Promise<void> {
  if (token === '') return;
  const now = context.clock.nowSeconds();
  const { stores } = context;

  if (looksLikeJwt(token)) {
    let payload: Awaited<ReturnType<TokenVerifier['verify']>>;
    try {
      // An expired token needs no denylisting, but checking costs nothing and keeps this simple.
      payload = await context.verifier.verify(token, { typ: 'at+jwt', ignoreExpiration: true });
    } catch {
      return;
    }
    const { jti, exp } = payload;
    if (payload.iss !== context.config.issuer || payload.client_id !== client.clientId) return;
    if (typeof jti !== 'string' || typeof exp !== 'number' || exp <= now) return;
    await stores.accessTokens.revokeJwtAccessToken(jti, exp);
    return;
  }

  const tokenHash = hashToken(token);
  const asRefreshToken = async (): Promise<boolean> => {
    const row = await stores.refreshTokens.findRefreshToken(tokenHash);
    if (row === null) return false;
    if (row.clientId === client.clientId) await stores.grants.revokeGrant(row.grantId, now);
    return true;
  };
  const asAccessToken = async (): Promise<boolean> => {
    const row = await stores.accessTokens.findAccessToken(tokenHash);
    if (row === null) return false;
    if (row.clientId === client.clientId) await stores.accessTokens.revokeAccessToken(tokenHash, now);
    return true;
  };
  const order = hint === 'access_token' ? [asAccessToken, asRefreshToken] : [asRefreshToken, asAccessToken];
  for (const lookup of order) if (await lookup()) return;
}
