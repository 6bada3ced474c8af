import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  computeS256Challenge,
  isValidCodeChallenge,
  isValidCodeVerifier,
  verifyPkceS256,
} from '../src/pkce.js';

// RFC 7636 Appendix B test vector.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('pkce', () => {
  it('computes the RFC 7636 Appendix B challenge', () => {
    expect(computeS256Challenge(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
  });

  it.each([
    ['43 unreserved characters', 'a'.repeat(43), true],
    ['128 characters', 'A'.repeat(128), true],
    ['all unreserved symbols', `${'a'.repeat(39)}-._~`, true],
    ['42 characters', 'a'.repeat(42), false],
    ['129 characters', 'a'.repeat(129), false],
    ['a space', `${'a'.repeat(42)} `, false],
    ['a plus sign', `${'a'.repeat(42)}+`, false],
    ['a slash', `${'a'.repeat(42)}/`, false],
    ['non-ASCII', `${'a'.repeat(42)}é`, false],
    ['empty', '', false],
  ])('verifier with %s → %s', (_name, verifier, valid) => {
    expect(isValidCodeVerifier(verifier)).toBe(valid);
  });

  it.each([
    [RFC_CHALLENGE, true],
    ['a'.repeat(43), true],
    ['a'.repeat(44), false],
    ['a'.repeat(42), false],
    [`${'a'.repeat(42)}=`, false],
    [`${'a'.repeat(42)}+`, false],
  ])('challenge %s → %s', (challenge, valid) => {
    expect(isValidCodeChallenge(challenge)).toBe(valid);
  });

  it('accepts the matching verifier', () => {
    expect(verifyPkceS256(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
  });

  it('rejects another verifier', () => {
    expect(verifyPkceS256(`${RFC_VERIFIER.slice(0, -1)}l`, RFC_CHALLENGE)).toBe(false);
  });

  it('rejects plain (the verifier itself as the challenge)', () => {
    const verifier = 'a'.repeat(43);
    expect(verifyPkceS256(verifier, verifier)).toBe(false);
  });

  it('rejects a syntactically invalid verifier even when its hash matches', () => {
    const verifier = 'short';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    expect(verifyPkceS256(verifier, challenge)).toBe(false);
  });
});
