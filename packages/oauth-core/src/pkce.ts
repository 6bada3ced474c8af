import { createHash, timingSafeEqual } from 'node:crypto';

// RFC 7636 §4.1: code-verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
// RFC 7636 §4.2: S256 challenge = BASE64URL(SHA256(verifier)), always 43 characters.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isValidCodeVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

/** Syntax of an S256 challenge (the only method this server accepts). */
export function isValidCodeChallenge(challenge: string): boolean {
  return S256_CHALLENGE.test(challenge);
}

/** BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), RFC 7636 §4.2. */
export function computeS256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * RFC 7636 §4.6 with S256 only (`plain` is refused at the authorization endpoint, RFC 9700 §2.1.1).
 * A verifier of the wrong syntax never matches. Constant-time comparison.
 */
export function verifyPkceS256(verifier: string, challenge: string): boolean {
  if (!isValidCodeVerifier(verifier) || !isValidCodeChallenge(challenge)) return false;
  const expected = Buffer.from(challenge, 'ascii');
  const actual = Buffer.from(computeS256Challenge(verifier), 'ascii');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
