import { describe, expect, it } from 'vitest';
import {
  dummyPasswordVerify,
  hashPassword,
  MAX_CONCURRENT_PASSWORD_DERIVATIONS,
  verifyPassword,
} from '../src/passwords.js';
import { createTestRandom } from '../src/testing.js';

const cheap = { N: 2 ** 10, r: 8, p: 1 };

describe('passwords', () => {
  it('hashes in the self-describing scrypt format and verifies', async () => {
    const hash = await hashPassword('alice-pass', { cost: cheap, random: createTestRandom('pw') });
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('alice-pass', hash)).toBe(true);
    expect(await verifyPassword('alice-pas', hash)).toBe(false);
  });

  it('salts every hash', async () => {
    const random = createTestRandom('salt');
    const a = await hashPassword('same', { cost: cheap, random });
    const b = await hashPassword('same', { cost: cheap, random });
    expect(a).not.toBe(b);
  });

  it('uses the default cost (N = 2^15) when none is given', async () => {
    const hash = await hashPassword('x');
    expect(hash.startsWith('scrypt$32768$8$1$')).toBe(true);
    expect(await verifyPassword('x', hash)).toBe(true);
  });

  it.each([
    '',
    'plain',
    'bcrypt$2b$10$abc',
    'scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    `scrypt$${2 ** 24}$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`,
    'scrypt$1024$8$1$AA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'scrypt$1024$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAA',
  ])('returns false for the malformed or hostile hash %j', async (hash) => {
    expect(await verifyPassword('x', hash)).toBe(false);
  });

  it('queues derivations beyond the concurrency limit, and every one still answers right', async () => {
    expect(MAX_CONCURRENT_PASSWORD_DERIVATIONS).toBeGreaterThanOrEqual(1);
    expect(MAX_CONCURRENT_PASSWORD_DERIVATIONS).toBeLessThanOrEqual(4);
    const hash = await hashPassword('burst', { cost: cheap, random: createTestRandom('burst') });
    const attempts = Array.from({ length: 3 * MAX_CONCURRENT_PASSWORD_DERIVATIONS + 2 }, (_, i) =>
      verifyPassword(i % 2 === 0 ? 'burst' : 'wrong', hash),
    );
    expect(await Promise.all(attempts)).toEqual(attempts.map((_, i) => i % 2 === 0));
    // A malformed hash is refused without taking a slot, and the queue has drained.
    expect(await verifyPassword('burst', 'plain')).toBe(false);
    expect(await verifyPassword('burst', hash)).toBe(true);
  });

  it('runs one full verification at the default cost, against a hash no password matches', async () => {
    const verifications: Array<{ hash: string; matched: boolean }> = [];
    await dummyPasswordVerify(async (password, hash) => {
      const matched = await verifyPassword(password, hash);
      verifications.push({ hash, matched });
      return matched;
    });
    expect(verifications).toHaveLength(1);
    // The cost of every stored user hash (hashPassword's default): the timing of a real check.
    expect(verifications[0]?.hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(verifications[0]?.matched).toBe(false);
  });
});
