import type { RandomSource } from './runtime.js';

/**
 * A random (version 4) UUID drawn from the injected random source. Used for grant ids and JWT
 * `jti` values: unique, not secret.
 */
export function generateUuid(random: RandomSource): string {
  const bytes = random.bytes(16);
  // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant 10xx in byte 8.
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
