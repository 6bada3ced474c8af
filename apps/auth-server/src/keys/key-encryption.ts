import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Private signing keys at rest: AES-256-GCM under KEY_ENCRYPTION_KEY.
 * Format: `v1.<iv>.<ciphertext>.<tag>` (base64url). The kid is the additional authenticated data,
 * so a ciphertext copied onto another key's row does not decrypt.
 */
const FORMAT_VERSION = 'v1';
const IV_BYTES = 12; // NIST SP 800-38D: 96-bit IVs for GCM.

/** Raised when the stored keys were encrypted under a different KEY_ENCRYPTION_KEY (or tampered with). */
export class KeyDecryptionError extends Error {
  constructor(kid: string) {
    super(
      `KEY_ENCRYPTION_KEY cannot decrypt signing key ${kid} stored in the database: ` +
        'it is not the key the signing keys were encrypted with (every instance must use the same value)',
    );
    this.name = 'KeyDecryptionError';
  }
}

export function encryptPrivateKey(keyEncryptionKey: Uint8Array, kid: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyEncryptionKey, iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT_VERSION, iv, ciphertext, tag]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

export function decryptPrivateKey(keyEncryptionKey: Uint8Array, kid: string, stored: string): string {
  const [version, iv, ciphertext, tag, ...rest] = stored.split('.');
  if (version !== FORMAT_VERSION || !iv || ciphertext === undefined || !tag || rest.length > 0) {
    throw new KeyDecryptionError(kid);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyEncryptionKey, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(kid, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    // GCM authentication failed: wrong key or altered row. Never fall back to new keys.
    throw new KeyDecryptionError(kid);
  }
}

/**
 * The key for client and resource secret hashes (oauth-core `createSecretHasher`), derived from
 * KEY_ENCRYPTION_KEY with HKDF (RFC 5869) so one operator secret serves both purposes without the
 * two uses ever sharing a key.
 */
export function deriveSecretHashingKey(keyEncryptionKey: Uint8Array): Uint8Array {
  return new Uint8Array(
    hkdfSync(
      'sha256',
      keyEncryptionKey,
      Buffer.alloc(0),
      'auth-server client and resource secret hashing v1',
      32,
    ),
  );
}

/**
 * The key of the stateless DPoP nonces (oauth-core `createDpopNonces`), derived from
 * KEY_ENCRYPTION_KEY like the secret hashing key: every instance hands out and accepts the same
 * nonces without storing them.
 */
export function deriveDpopNonceKey(keyEncryptionKey: Uint8Array): Uint8Array {
  return new Uint8Array(
    hkdfSync('sha256', keyEncryptionKey, Buffer.alloc(0), 'auth-server DPoP nonces v1', 32),
  );
}
