import { createHash, hkdfSync } from 'node:crypto';

/** What a derived key protects; each purpose gets its own key, so one can never open the other's data. */
export type KeyPurpose = 'sign-in state' | 'session tokens' | 'sign-out csrf';

/**
 * A 256-bit key for A256GCM derived from SESSION_SECRET with HKDF-SHA-256 (RFC 5869). The secret is
 * a passphrase of any length; HKDF turns it into uniform key material, and the `info` label keeps
 * the keys of different purposes independent. Every instance with the same secret derives the same
 * keys, which is what lets any instance finish a sign-in another one started.
 */
export function deriveKey(sessionSecret: string, purpose: KeyPurpose): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', sessionSecret, 'orders/v1', `orders ${purpose}`, 32));
}

/** base64url SHA-256: how cookie values are stored or compared without keeping the value itself. */
export function sha256Base64url(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}
