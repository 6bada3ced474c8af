import { randomUUID } from 'node:crypto';
import { computeAccessTokenHash } from '@oidc-orders/oauth-core';
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/** A client's DPoP key pair, with its public JWK and RFC 7638 thumbprint. */
export interface DpopKey {
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  jkt: string;
}

export async function createDpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { alg, privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') };
}

export interface ProofClaims {
  htm?: string;
  htu: string;
  /** Seconds since the epoch; default now. */
  iat?: number;
  jti?: string;
  nonce?: string;
  /** The access token to hash into `ath`. */
  accessToken?: string;
}

/** An RFC 9449 §4.2 proof, built by hand so tests can break any part of it. */
export function dpopProof(key: DpopKey, claims: ProofClaims): Promise<string> {
  return new SignJWT({
    jti: claims.jti ?? randomUUID(),
    htm: claims.htm ?? 'POST',
    htu: claims.htu,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    ...(claims.nonce !== undefined ? { nonce: claims.nonce } : {}),
    ...(claims.accessToken !== undefined ? { ath: computeAccessTokenHash(claims.accessToken) } : {}),
  })
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.publicJwk })
    .sign(key.privateKey);
}
