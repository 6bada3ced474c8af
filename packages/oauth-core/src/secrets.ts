import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Hashes and checks client and resource secrets. They are high-entropy values chosen by the server
 * or the operator, so a keyed HMAC is enough and keeps the token endpoint (the hot path) free of a
 * KDF. The key is a server secret: a leaked database alone does not allow offline guessing.
 */
export interface SecretHasher {
  /** `hmac-sha256$<base64url>`; deterministic for a given key. */
  hash(secret: string): string;
  /** Constant-time comparison; `false` for a malformed or foreign hash, never throws. */
  verify(secret: string, hash: string): boolean;
}

const PREFIX = 'hmac-sha256$';

export function createSecretHasher(key: Uint8Array): SecretHasher {
  if (key.byteLength < 32) {
    throw new RangeError('the secret hashing key must be at least 32 bytes');
  }
  const keyCopy = Buffer.from(key);
  const mac = (secret: string): Buffer => createHmac('sha256', keyCopy).update(secret, 'utf8').digest();
  return {
    hash: (secret) => `${PREFIX}${mac(secret).toString('base64url')}`,
    verify: (secret, hash) => {
      if (!hash.startsWith(PREFIX)) return false;
      const expected = Buffer.from(hash.slice(PREFIX.length), 'base64url');
      const actual = mac(secret);
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    },
  };
}
