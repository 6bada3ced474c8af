import { describe, expect, it } from 'vitest';
import { generateUuid } from '../src/ids.js';
import { createSecretHasher } from '../src/secrets.js';
import { createTestRandom } from '../src/testing.js';
import { generateOpaqueToken, hashToken } from '../src/tokens/opaque.js';

describe('createSecretHasher', () => {
  const hasher = createSecretHasher(new Uint8Array(32).fill(1));

  it('verifies the right secret and rejects a wrong one', () => {
    const hash = hasher.hash('s3cret');
    expect(hash.startsWith('hmac-sha256$')).toBe(true);
    expect(hash).not.toContain('s3cret');
    expect(hasher.verify('s3cret', hash)).toBe(true);
    expect(hasher.verify('s3cret ', hash)).toBe(false);
    expect(hasher.verify('', hash)).toBe(false);
  });

  it('depends on the key', () => {
    const other = createSecretHasher(new Uint8Array(32).fill(2));
    expect(other.hash('s3cret')).not.toBe(hasher.hash('s3cret'));
    expect(other.verify('s3cret', hasher.hash('s3cret'))).toBe(false);
  });

  it.each(['', 'plain', 'hmac-sha256$', 'hmac-sha256$AAAA', 'scrypt$1$2$3$4$5'])(
    'returns false for the malformed hash %j',
    (hash) => {
      expect(hasher.verify('s3cret', hash)).toBe(false);
    },
  );

  it('refuses a short key', () => {
    expect(() => createSecretHasher(new Uint8Array(16))).toThrow(RangeError);
  });
});

describe('opaque tokens', () => {
  it('are 256 random bits in base64url', () => {
    const random = createTestRandom('opaque');
    const token = generateOpaqueToken(random);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateOpaqueToken(random)).not.toBe(token);
  });

  it('refuses fewer than 128 bits', () => {
    expect(() => generateOpaqueToken(createTestRandom(), 8)).toThrow(RangeError);
  });

  it('hash with SHA-256 base64url', () => {
    // SHA-256("abc"), FIPS 180-2 test vector.
    expect(hashToken('abc')).toBe(
      Buffer.from('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'hex').toString(
        'base64url',
      ),
    );
  });
});

describe('generateUuid', () => {
  it('writes a version 4, variant 1 UUID', () => {
    const random = createTestRandom('uuid');
    const a = generateUuid(random);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(generateUuid(random)).not.toBe(a);
  });
});
