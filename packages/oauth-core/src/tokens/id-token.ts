import { createHash } from 'node:crypto';
import { scopedUserClaims } from '../claims.js';
import type { ProtocolConfig } from '../config.js';
import type { Client, User } from '../model.js';
import type { Clock } from '../runtime.js';
import type { TokenSigner } from './signer.js';

/**
 * OpenID Connect Core §3.1.3.6: base64url of the left half of the hash of the ASCII access token,
 * using the hash of the ID token's `alg` (SHA-256 for RS256 and ES256).
 */
export function computeAtHash(accessToken: string, alg: string): string {
  const size = alg.endsWith('512') ? 512 : alg.endsWith('384') ? 384 : 256;
  const digest = createHash(`sha${size}`).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export interface IdTokenInput {
  client: Pick<Client, 'clientId' | 'idTokenSigningAlg'>;
  user: User;
  /** Granted scopes: `profile` adds `name`, `email` adds `email` and `email_verified`. */
  scopes: readonly string[];
  /** From the authorization request; absent on refresh (OIDC Core §12.2). */
  nonce?: string | null;
  authTime?: number | null;
  /** RFC 8176 `amr` and OIDC Core §2 `acr` of the sign-in, when known. */
  amr?: readonly string[] | null;
  acr?: string | null;
  /** The SSO session id (OIDC Front/Back-Channel Logout `sid`). */
  sid?: string | null;
  /**
   * The grant the ID token was issued in, as the private claim `gid` (as in access tokens): an ID
   * token presented for token exchange (RFC 8693) is only as alive as that grant.
   */
  grantId?: string | null;
  /** The access token issued with it, for `at_hash`. */
  accessToken?: string | null;
}

export interface IdTokenContext {
  signer: TokenSigner;
  clock: Clock;
  config: ProtocolConfig;
}

/** OpenID Connect Core §2: iss, sub, aud = client_id, exp, iat, plus the claims below when known. */
export async function issueIdToken(input: IdTokenInput, context: IdTokenContext): Promise<string> {
  const now = context.clock.nowSeconds();
  const alg = input.client.idTokenSigningAlg;
  return context.signer.sign(
    {
      ...scopedUserClaims(input.user, input.scopes),
      iss: context.config.issuer,
      sub: input.user.sub,
      aud: input.client.clientId,
      iat: now,
      exp: now + context.config.idTokenTtl,
      ...(input.authTime != null ? { auth_time: input.authTime } : {}),
      ...(input.amr != null && input.amr.length > 0 ? { amr: [...input.amr] } : {}),
      ...(input.acr != null ? { acr: input.acr } : {}),
      ...(input.nonce != null ? { nonce: input.nonce } : {}),
      ...(input.sid != null ? { sid: input.sid } : {}),
      ...(input.grantId != null ? { gid: input.grantId } : {}),
      ...(input.accessToken != null ? { at_hash: computeAtHash(input.accessToken, alg) } : {}),
    },
    { alg, typ: 'JWT' },
  );
}
