import type { RandomSource } from './runtime.js';

/**
 * RFC 8628 §6.1: "BCDFGHJKLMNPQRSTVWXZ" — base-20 consonants, no vowels (no accidental words) and
 * no look-alikes such as 0/O or 1/I. Eight of them give 20^8 ≈ 2.56 × 10^10 codes (≈ 34.5 bits),
 * which the verification page protects with rate limiting (§5.1).
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

// The largest multiple of 20 that fits in a byte: bytes at or above it are redrawn, so every
// letter is equally likely (plain `byte % 20` would favour the first 16 letters).
const UNBIASED_BYTE_LIMIT = 256 - (256 % USER_CODE_ALPHABET.length);

/** A fresh user code, normalised (8 letters, no dash), drawn without bias from `random`. */
export function generateUserCode(random: RandomSource): string {
  let code = '';
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of random.bytes(USER_CODE_LENGTH * 2)) {
      if (byte >= UNBIASED_BYTE_LIMIT) continue;
      code += USER_CODE_ALPHABET[byte % USER_CODE_ALPHABET.length];
      if (code.length === USER_CODE_LENGTH) break;
    }
  }
  return code;
}

/** How the code is shown to people (RFC 8628 §6.1 suggests a separator): `WDJB-MJHT`. */
export function formatUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
}

/**
 * What a person typed → the normalised code, or `null` when it cannot be one. RFC 8628 §6.1: the
 * server "should ignore any characters like punctuation that are not in the user-code character
 * set" and compare case-insensitively, so `wdjb mjht`, `WDJB-MJHT` and `wdjbmjht` are the same.
 * Letters outside the alphabet (vowels, digits) make the input invalid rather than being dropped.
 */
export function normalizeUserCode(input: string): string | null {
  if (input.length > 64) return null;
  const letters = input.toUpperCase().replace(/[\s\-_.]/g, '');
  if (letters.length !== USER_CODE_LENGTH) return null;
  for (const letter of letters) if (!USER_CODE_ALPHABET.includes(letter)) return null;
  return letters;
}
