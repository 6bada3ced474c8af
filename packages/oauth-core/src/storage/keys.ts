import type { JWK } from 'jose';
import type { SigningAlg } from '../model.js';

/**
 * A signing key as stored. The private part is opaque to the protocol layer: the server
 * encrypts it at rest and decrypts it into a signer.
 */
export interface SigningKeyRecord {
  kid: string;
  alg: SigningAlg;
  publicJwk: JWK;
  /** Encrypted private key (format owned by the server). */
  privateKeyCiphertext: string;
  createdAt: number;
  /** Published in JWKS from creation; signs from this time on (rotation pre-publication). */
  activatesAt: number;
  /** Stops signing at this time; still published until `removeAfter`. */
  retiresAt: number | null;
  /** Dropped from JWKS after this time (every token it signed has expired). */
  removeAfter: number | null;
}

export interface KeyStore {
  listSigningKeys(): Promise<readonly SigningKeyRecord[]>;
  insertSigningKey(key: SigningKeyRecord): Promise<void>;
  retireSigningKey(kid: string, retiresAt: number, removeAfter: number): Promise<void>;
  deleteSigningKey(kid: string): Promise<void>;
}
