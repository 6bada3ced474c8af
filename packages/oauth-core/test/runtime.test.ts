import { describe, expect, it } from 'vitest';
import { createPooledRandom, systemRandom } from '../src/runtime.js';

describe('createPooledRandom', () => {
  it('hands out the requested number of bytes, never the same bytes twice, across refills', () => {
    const random = createPooledRandom(64);
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const bytes = random.bytes(8);
      expect(bytes).toHaveLength(8);
      seen.add(Buffer.from(bytes).toString('hex'));
    }
    // 40 draws of 64 random bits: a repeat would mean the pool handed out bytes twice.
    expect(seen.size).toBe(40);
  });

  it('serves requests larger than an eighth of the pool directly, and odd sizes across the refill', () => {
    const random = createPooledRandom(64);
    expect(random.bytes(100)).toHaveLength(100);
    const lengths = [7, 5, 3, 8, 1, 8, 8, 8, 8, 8, 8];
    for (const length of lengths) expect(random.bytes(length)).toHaveLength(length);
  });

  it('returns copies: changing one does not change what comes next', () => {
    const random = createPooledRandom(64);
    const first = random.bytes(8);
    first.fill(0);
    expect(Buffer.from(random.bytes(8)).equals(Buffer.alloc(8))).toBe(false);
  });

  it('is what systemRandom uses', () => {
    const a = systemRandom.bytes(32);
    const b = systemRandom.bytes(32);
    expect(a).toHaveLength(32);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });
});
