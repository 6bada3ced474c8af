import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import type { RandomSource } from '../runtime.js';

/**
 * A refresh token retried within its client's reuse interval must get the same successor back, on
 * any instance, yet the stores keep only hashes of tokens. Two ways were weighed:
 *
 * - derive the successor from the old token and a server secret (HMAC): nothing more to store,
 *   but every instance must share one more long-lived secret, whoever obtains it can compute the
 *   successor of any token they see, and rotating it would break the chains in flight;
 * - seal the successor under a key derived from the old token itself (chosen): the successor's
 *   row keeps `AES-256-GCM(HKDF-SHA256(old token), successor)`. Only a holder of the old token's
 *   value can open it, which is exactly who may ask for the successor again; the database at rest
 *   holds no token in clear and nothing that opens one (it keeps only the old token's SHA-256,
 *   and the old token carries 256 random bits, so the key cannot be guessed from it). No server
 *   secret is involved, so every instance answers the same way.
 *
 * Each key seals one successor that is ever stored (only the winner of the rotation writes its
 * seal), and the nonce is random all the same.
 */
const SEAL_INFO = 'refresh-token successor seal v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

function sealKey(parentToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(parentToken, 'utf8'), Buffer.alloc(0), SEAL_INFO, 32));
}

/** `successor` sealed under a key only `parentToken` opens: base64url(nonce ‖ ciphertext ‖ tag). */
export function sealSuccessorToken(parentToken: string, successor: string, random: RandomSource): string {
  const nonce = Buffer.from(random.bytes(NONCE_BYTES));
  const cipher = createCipheriv('aes-256-gcm', sealKey(parentToken), nonce);
  const sealed = Buffer.concat([cipher.update(successor, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** The successor `sealSuccessorToken` sealed, or `null` when `parentToken` does not open `sealed`. */
export function openSuccessorToken(parentToken: string, sealed: string): string | null {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= NONCE_BYTES + TAG_BYTES) return null;
  const decipher = createDecipheriv('aes-256-gcm', sealKey(parentToken), bytes.subarray(0, NONCE_BYTES));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    const body = bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
