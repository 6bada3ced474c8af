import { createHash } from 'node:crypto';
import type { RandomSource } from '../runtime.js';

/**
 * A bearer value with `bytes` of entropy (256 bits by default, well above RFC 6749 §10.10's
 * 2^-128 guessing bound), base64url without padding.
 */
export function generateOpaqueToken(random: RandomSource, bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 16) {
    throw new RangeError('an opaque token needs at least 128 bits of entropy');
  }
  return Buffer.from(random.bytes(bytes)).toString('base64url');
}

/**
 * What the stores keep instead of a code or token: SHA-256, base64url. The inputs carry 256
 * random bits, so a plain (unsalted, fast) hash is enough and lookups stay a single index probe.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}
