import { describe, expect, it } from 'vitest';
import type { RandomSource } from '../src/runtime.js';
import { createTestRandom } from '../src/testing.js';
import {
  formatUserCode,
  generateUserCode,
  normalizeUserCode,
  USER_CODE_ALPHABET,
  USER_CODE_LENGTH,
} from '../src/user-code.js';

/** Hands out the given bytes, then zeros. */
function scriptedRandom(script: number[]): RandomSource {
  const queue = [...script];
  return { bytes: (length) => Uint8Array.from({ length }, () => queue.shift() ?? 0) };
}

describe('user codes (RFC 8628 §6.1)', () => {
  it('uses the 20 consonants of RFC 8628 §6.1 and 8 characters', () => {
    expect(USER_CODE_ALPHABET).toBe('BCDFGHJKLMNPQRSTVWXZ');
    expect(USER_CODE_LENGTH).toBe(8);
  });

  it('generates 8 characters of the alphabet, different each time', () => {
    const random = createTestRandom('user-codes');
    const codes = Array.from({ length: 500 }, () => generateUserCode(random));
    for (const code of codes) expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('draws every letter about equally often (no modulo bias)', () => {
    const random = createTestRandom('user-code-distribution');
    const counts = new Map<string, number>();
    for (let i = 0; i < 2500; i++) {
      for (const letter of generateUserCode(random)) counts.set(letter, (counts.get(letter) ?? 0) + 1);
    }
    // 20 000 letters, 1 000 expected each; a biased `byte % 20` would give the first 16 letters ~1 067
    // and the last 4 ~733. Deterministic random source: this never flakes.
    expect(counts.size).toBe(20);
    for (const count of counts.values()) expect(count).toBeGreaterThan(880);
    for (const count of counts.values()) expect(count).toBeLessThan(1120);
  });

  it('redraws bytes at or above 240 instead of folding them onto the first letters', () => {
    // 240..255 are rejected; 0 → B, 19 → Z, 20 → B, 239 → Z (239 % 20 = 19).
    const random = scriptedRandom([240, 255, 0, 19, 250, 20, 239, 1, 2, 3, 4]);
    expect(generateUserCode(random)).toBe('BZBZCDFG');
  });

  it('formats as XXXX-XXXX', () => {
    expect(formatUserCode('WDJBMJHT')).toBe('WDJB-MJHT');
  });

  it.each([
    ['WDJB-MJHT', 'WDJBMJHT'],
    ['wdjb-mjht', 'WDJBMJHT'],
    ['WdJbMjHt', 'WDJBMJHT'],
    ['WDJBMJHT', 'WDJBMJHT'],
    ['  wdjb mjht ', 'WDJBMJHT'],
    ['WDJB - MJHT', 'WDJBMJHT'],
    ['wd.jb_mj-ht', 'WDJBMJHT'],
  ])('normalizes %j to %j', (typed, normalized) => {
    expect(normalizeUserCode(typed)).toBe(normalized);
  });

  it.each([
    ['empty', ''],
    ['too short', 'WDJB-MJH'],
    ['too long', 'WDJB-MJHTB'],
    ['a vowel', 'WDJB-MJHA'],
    ['a digit', 'WDJB-MJH1'],
    ['a letter outside the alphabet (Y)', 'WDJB-MJHY'],
    ['a non-ASCII letter', 'WDJB-MJHÇ'],
    ['absurdly long input', `${'B'.repeat(8)}${'-'.repeat(100)}`],
  ])('rejects %s', (_case, typed) => {
    expect(normalizeUserCode(typed)).toBeNull();
  });
});
