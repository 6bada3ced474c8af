import { describe, expect, it } from 'vitest';
import type { SigningKeyRecord } from '../../src/storage/keys.js';
import { type ContractContext, T0 } from './context.js';

/** The KeyStore part of the store contract. */
export function describeKeyStoreContract(t: ContractContext): void {
  describe('KeyStore', () => {
    const key = (kid: string, createdAt: number): SigningKeyRecord => ({
      kid,
      alg: 'RS256',
      publicJwk: { kty: 'RSA', n: 'AQAB-modulus', e: 'AQAB', kid },
      privateKeyCiphertext: 'ciphertext',
      createdAt,
      activatesAt: createdAt + 10,
      retiresAt: null,
      removeAfter: null,
    });

    it('inserts, lists, retires and deletes signing keys', async (context) => {
      const keys = t.fixture.keys;
      if (keys === undefined) {
        context.skip();
        return;
      }
      const a = key(`kid-a-${t.n}`, T0);
      const b = key(`kid-b-${t.n}`, T0 + 1);
      await keys.insertSigningKey(a);
      await keys.insertSigningKey(b);
      const listed = await keys.listSigningKeys();
      expect(listed).toContainEqual(a);
      expect(listed).toContainEqual(b);

      await keys.retireSigningKey(a.kid, T0 + 100, T0 + 200);
      const retired = (await keys.listSigningKeys()).find((k) => k.kid === a.kid);
      expect(retired).toEqual({ ...a, retiresAt: T0 + 100, removeAfter: T0 + 200 });

      await keys.deleteSigningKey(a.kid);
      const after = await keys.listSigningKeys();
      expect(after.some((k) => k.kid === a.kid)).toBe(false);
      expect(after).toContainEqual(b);
    });
  });
}
