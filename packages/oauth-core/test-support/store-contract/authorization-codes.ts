import { beforeEach, describe, expect, it } from 'vitest';
import { type ContractContext, T0 } from './context.js';

/** The AuthorizationCodeStore part of the store contract. */
export function describeAuthorizationCodeStoreContract(t: ContractContext): void {
  describe('AuthorizationCodeStore', () => {
    beforeEach(async () => {
      await t.stores.grants.createGrant(t.grant());
    });

    it('creates and finds a code with every field; null for an unknown hash', async () => {
      const c = t.code();
      const noPkce = t.code('np', { codeChallenge: null, nonce: null, sid: null, resources: [] });
      await t.stores.codes.createAuthorizationCode(c);
      await t.stores.codes.createAuthorizationCode(noPkce);
      expect(await t.stores.codes.findAuthorizationCode(c.codeHash)).toEqual(c);
      expect(await t.stores.codes.findAuthorizationCode(noPkce.codeHash)).toEqual(noPkce);
      expect(await t.stores.codes.findAuthorizationCode(`code-${t.n}-missing`)).toBeNull();
    });

    it('consumeAuthorizationCode is true once, then false; the used code stays findable', async () => {
      await t.stores.codes.createAuthorizationCode(t.code());
      expect(await t.stores.codes.consumeAuthorizationCode(`code-${t.n}-c`, T0 + 3)).toBe(true);
      expect(await t.stores.codes.consumeAuthorizationCode(`code-${t.n}-c`, T0 + 4)).toBe(false);
      expect((await t.stores.codes.findAuthorizationCode(`code-${t.n}-c`))?.usedAt).toBe(T0 + 3);
    });

    it('consumeAuthorizationCode is true for exactly one of 10 concurrent calls', async () => {
      await t.stores.codes.createAuthorizationCode(t.code());
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.stores.codes.consumeAuthorizationCode(`code-${t.n}-c`, T0 + i),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('consumeAuthorizationCode of an unknown code is false', async () => {
      expect(await t.stores.codes.consumeAuthorizationCode(`code-${t.n}-missing`, T0)).toBe(false);
    });
  });
}
