import type { JWTPayload } from 'jose';
import type { SigningAlg } from '../model.js';

/** JWT `typ` header values this server writes. */
export type JwtType = 'at+jwt' | 'JWT' | 'logout+jwt' | 'token-introspection+jwt';

/**
 * Signs with the server's currently active key for `alg` and puts its `kid` in the header.
 * Key storage, encryption at rest and rotation belong to the server; the protocol layer only signs.
 */
export interface TokenSigner {
  sign(claims: JWTPayload, options: { alg: SigningAlg; typ: JwtType }): Promise<string>;
}

/**
 * Verifies a JWT that this server signed (JWT access tokens at introspection, `id_token_hint`).
 * Rejects on a bad signature or unknown `kid`; `ignoreExpiration` serves `id_token_hint`,
 * which OIDC RP-Initiated Logout accepts after expiry.
 */
export interface TokenVerifier {
  verify(jwt: string, options: { typ?: JwtType; ignoreExpiration?: boolean }): Promise<JWTPayload>;
}
