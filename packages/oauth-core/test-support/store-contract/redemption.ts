import { beforeEach, describe, expect, it } from 'vitest';
import { type ContractContext, T0 } from './context.js';

/**
 * 100 finds at once (a store may coalesce them into shared reads), every fifth for a key nobody
 * stored: each answers its own record, or `null`.
 */
async function expectConcurrentFindsAnswerTheirOwn<R, A>(
  find: (key: string) => Promise<A | null>,
  records: readonly R[],
  keyOf: (record: R) => string,
  missingPrefix: string,
  answerFor: (record: R) => A,
): Promise<void> {
  const keys = Array.from({ length: 100 }, (_, index) =>
    index % 5 === 4 ? `${missingPrefix}-${index}` : keyOf(records[index % records.length]!),
  );
  const found = await Promise.all(keys.map((key) => find(key)));
  found.forEach((answer, index) => {
    const record = records.find((candidate) => keyOf(candidate) === keys[index]);
    expect(answer).toEqual(record === undefined ? null : answerFor(record));
  });
}

/** The optional fast paths of redemption and rotation: part of the store contract. */
export function describeRedemptionFastPathContract(t: ContractContext): void {
  // The optional one-read / one-statement fast paths of code redemption and refresh rotation
  // (grants/redemption.ts). Each test is skipped for a store that does not offer the method.
  describe('fast paths of redemption and rotation (optional methods)', () => {
    beforeEach(async () => {
      await t.stores.grants.createGrant(t.grant());
      await t.fixture.seed({ users: [t.user()] });
    });
    const issued = (suffix: string, over: { access?: boolean; refresh?: boolean } = {}) => ({
      accessToken:
        over.access === false
          ? null
          : t.access(`new-${suffix}`, {
              dpopJkt: 'jkt-new',
              claims: { email: 'a@b.example', act: { sub: 'x' } },
            }),
      refreshToken:
        over.refresh === false
          ? null
          : t.refresh(`new-${suffix}`, {
              parentHash: `rt-${t.n}-r`,
              resources: ['https://a.example'],
              dpopJkt: 'jkt',
            }),
    });

    it('findRefreshTokenWithGrantAndUser: the token, its grant and its user; nulls when gone', async (context) => {
      const find = t.stores.refreshTokens.findRefreshTokenWithGrantAndUser?.bind(t.stores.refreshTokens);
      if (!find) return context.skip();
      const token = t.refresh('r', { dpopJkt: 'jkt', resources: ['https://a.example'], usedAt: T0 + 1 });
      await t.stores.refreshTokens.createRefreshToken(token);
      expect(await find(token.tokenHash)).toEqual({ token, grant: t.grant(), user: t.user() });
      const orphan = t.refresh('orphan', { grantId: `grant-${t.n}-missing`, sub: `sub-${t.n}-missing` });
      await t.stores.refreshTokens.createRefreshToken(orphan);
      expect(await find(orphan.tokenHash)).toEqual({ token: orphan, grant: null, user: null });
      expect(await find(`rt-${t.n}-missing`)).toBeNull();
    });

    it('findRefreshTokenWithGrantAndUser: 100 concurrent finds each answer their own token', async (context) => {
      const find = t.stores.refreshTokens.findRefreshTokenWithGrantAndUser?.bind(t.stores.refreshTokens);
      if (!find) return context.skip();
      const tokens = Array.from({ length: 40 }, (_, index) => t.refresh(`c${index}`));
      for (const token of tokens) await t.stores.refreshTokens.createRefreshToken(token);
      await expectConcurrentFindsAnswerTheirOwn(
        find,
        tokens,
        (token) => token.tokenHash,
        `rt-${t.n}-missing`,
        (token) => ({
          token,
          grant: t.grant(),
          user: t.user(),
        }),
      );
    });

    it('findAccessTokenWithUser: the token and its user; null for a client token, a missing user, an unknown hash', async (context) => {
      const find = t.stores.accessTokens.findAccessTokenWithUser?.bind(t.stores.accessTokens);
      if (!find) return context.skip();
      const token = t.access('u', { dpopJkt: 'jkt' });
      await t.stores.accessTokens.createAccessToken(token);
      expect(await find(token.tokenHash)).toEqual({ token, user: t.user() });
      const clientOwn = t.access('client', { grantId: null, sub: `client-${t.n}` });
      await t.stores.accessTokens.createAccessToken(clientOwn);
      expect(await find(clientOwn.tokenHash)).toEqual({ token: clientOwn, user: null });
      const orphan = t.access('orphan', { sub: `sub-${t.n}-missing` });
      await t.stores.accessTokens.createAccessToken(orphan);
      expect(await find(orphan.tokenHash)).toEqual({ token: orphan, user: null });
      expect(await find(`at-${t.n}-missing`)).toBeNull();
    });

    it('findAccessTokenWithUser: 100 concurrent finds each answer their own token', async (context) => {
      const find = t.stores.accessTokens.findAccessTokenWithUser?.bind(t.stores.accessTokens);
      if (!find) return context.skip();
      const tokens = Array.from({ length: 40 }, (_, index) => t.access(`c${index}`));
      for (const token of tokens) await t.stores.accessTokens.createAccessToken(token);
      await expectConcurrentFindsAnswerTheirOwn(
        find,
        tokens,
        (token) => token.tokenHash,
        `at-${t.n}-missing`,
        (token) => ({
          token,
          user: t.user(),
        }),
      );
    });

    it('findAuthorizationCodeWithGrantAndUser: 100 concurrent finds each answer their own code', async (context) => {
      const find = t.stores.codes.findAuthorizationCodeWithGrantAndUser?.bind(t.stores.codes);
      if (!find) return context.skip();
      const codes = Array.from({ length: 40 }, (_, index) => t.code(`cc${index}`));
      for (const code of codes) await t.stores.codes.createAuthorizationCode(code);
      await expectConcurrentFindsAnswerTheirOwn(
        find,
        codes,
        (code) => code.codeHash,
        `code-${t.n}-missing`,
        (code) => ({
          code,
          grant: t.grant(),
          user: t.user(),
        }),
      );
    });

    it('findAuthorizationCodeWithGrantAndUser: the code, its grant and its user; nulls when gone', async (context) => {
      const find = t.stores.codes.findAuthorizationCodeWithGrantAndUser?.bind(t.stores.codes);
      if (!find) return context.skip();
      const c = t.code('c', { usedAt: T0 + 2 });
      await t.stores.codes.createAuthorizationCode(c);
      expect(await find(c.codeHash)).toEqual({ code: c, grant: t.grant(), user: t.user() });
      const orphan = t.code('orphan', {
        grantId: `grant-${t.n}-missing`,
        sub: `sub-${t.n}-missing`,
        nonce: null,
      });
      await t.stores.codes.createAuthorizationCode(orphan);
      expect(await find(orphan.codeHash)).toEqual({ code: orphan, grant: null, user: null });
      expect(await find(`code-${t.n}-missing`)).toBeNull();
    });

    it('rotateRefreshToken marks used and stores the successor once; then false and nothing written', async (context) => {
      const rotate = t.stores.refreshTokens.rotateRefreshToken?.bind(t.stores.refreshTokens);
      if (!rotate) return context.skip();
      await t.stores.refreshTokens.createRefreshToken(t.refresh());
      const first = issued('1');
      expect(await rotate(`rt-${t.n}-r`, T0 + 2, first)).toBe(true);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r`))?.usedAt).toBe(T0 + 2);
      expect(await t.stores.refreshTokens.findRefreshToken(first.refreshToken!.tokenHash)).toEqual(
        first.refreshToken,
      );
      expect(await t.stores.accessTokens.findAccessToken(first.accessToken!.tokenHash)).toEqual(
        first.accessToken,
      );

      const second = issued('2');
      expect(await rotate(`rt-${t.n}-r`, T0 + 3, second)).toBe(false);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-r`))?.usedAt).toBe(T0 + 2);
      expect(await t.stores.refreshTokens.findRefreshToken(second.refreshToken!.tokenHash)).toBeNull();
      expect(await t.stores.accessTokens.findAccessToken(second.accessToken!.tokenHash)).toBeNull();
    });

    it('rotateRefreshToken is false for a revoked or unknown token and writes nothing', async (context) => {
      const rotate = t.stores.refreshTokens.rotateRefreshToken?.bind(t.stores.refreshTokens);
      if (!rotate) return context.skip();
      await t.stores.refreshTokens.createRefreshToken(t.refresh('rev', { revokedAt: T0 }));
      const attempt = issued('rev');
      expect(await rotate(`rt-${t.n}-rev`, T0 + 1, attempt)).toBe(false);
      expect(await rotate(`rt-${t.n}-missing`, T0 + 1, attempt)).toBe(false);
      expect((await t.stores.refreshTokens.findRefreshToken(`rt-${t.n}-rev`))?.usedAt).toBeNull();
      expect(await t.stores.refreshTokens.findRefreshToken(attempt.refreshToken!.tokenHash)).toBeNull();
      expect(await t.stores.accessTokens.findAccessToken(attempt.accessToken!.tokenHash)).toBeNull();
    });

    it('rotateRefreshToken stores only what is issued (no opaque access token, or no refresh token)', async (context) => {
      const rotate = t.stores.refreshTokens.rotateRefreshToken?.bind(t.stores.refreshTokens);
      if (!rotate) return context.skip();
      await t.stores.refreshTokens.createRefreshToken(t.refresh('a'));
      await t.stores.refreshTokens.createRefreshToken(t.refresh('b'));
      const onlyRefresh = issued('only-refresh', { access: false });
      const onlyAccess = issued('only-access', { refresh: false });
      expect(await rotate(`rt-${t.n}-a`, T0 + 1, onlyRefresh)).toBe(true);
      expect(await rotate(`rt-${t.n}-b`, T0 + 1, onlyAccess)).toBe(true);
      expect(await t.stores.refreshTokens.findRefreshToken(onlyRefresh.refreshToken!.tokenHash)).toEqual(
        onlyRefresh.refreshToken,
      );
      expect(await t.stores.accessTokens.findAccessToken(onlyAccess.accessToken!.tokenHash)).toEqual(
        onlyAccess.accessToken,
      );
      expect(await rotate(`rt-${t.n}-a`, T0 + 2, { accessToken: null, refreshToken: null })).toBe(false);
    });

    it('rotateRefreshToken: exactly one of 10 concurrent calls wins, and only its writes exist', async (context) => {
      const rotate = t.stores.refreshTokens.rotateRefreshToken?.bind(t.stores.refreshTokens);
      if (!rotate) return context.skip();
      await t.stores.refreshTokens.createRefreshToken(t.refresh());
      const attempts = Array.from({ length: 10 }, (_, i) => issued(`race-${i}`));
      const results = await Promise.all(attempts.map((attempt, i) => rotate(`rt-${t.n}-r`, T0 + i, attempt)));
      expect(results.filter(Boolean)).toHaveLength(1);
      for (const [i, attempt] of attempts.entries()) {
        const stored = await t.stores.refreshTokens.findRefreshToken(attempt.refreshToken!.tokenHash);
        const storedAccess = await t.stores.accessTokens.findAccessToken(attempt.accessToken!.tokenHash);
        expect(stored).toEqual(results[i] ? attempt.refreshToken : null);
        expect(storedAccess).toEqual(results[i] ? attempt.accessToken : null);
      }
    });

    it('redeemAuthorizationCode consumes once and stores the tokens; then false and nothing written', async (context) => {
      const redeem = t.stores.codes.redeemAuthorizationCode?.bind(t.stores.codes);
      if (!redeem) return context.skip();
      await t.stores.codes.createAuthorizationCode(t.code());
      const first = issued('c1');
      expect(await redeem(`code-${t.n}-c`, T0 + 3, first)).toBe(true);
      expect((await t.stores.codes.findAuthorizationCode(`code-${t.n}-c`))?.usedAt).toBe(T0 + 3);
      expect(await t.stores.refreshTokens.findRefreshToken(first.refreshToken!.tokenHash)).toEqual(
        first.refreshToken,
      );
      expect(await t.stores.accessTokens.findAccessToken(first.accessToken!.tokenHash)).toEqual(
        first.accessToken,
      );

      const second = issued('c2');
      expect(await redeem(`code-${t.n}-c`, T0 + 4, second)).toBe(false);
      expect(await redeem(`code-${t.n}-missing`, T0 + 4, second)).toBe(false);
      expect((await t.stores.codes.findAuthorizationCode(`code-${t.n}-c`))?.usedAt).toBe(T0 + 3);
      expect(await t.stores.refreshTokens.findRefreshToken(second.refreshToken!.tokenHash)).toBeNull();
      expect(await t.stores.accessTokens.findAccessToken(second.accessToken!.tokenHash)).toBeNull();
    });

    it('redeemAuthorizationCode: exactly one of 10 concurrent calls wins, and only its writes exist', async (context) => {
      const redeem = t.stores.codes.redeemAuthorizationCode?.bind(t.stores.codes);
      if (!redeem) return context.skip();
      await t.stores.codes.createAuthorizationCode(t.code());
      const attempts = Array.from({ length: 10 }, (_, i) =>
        issued(`code-race-${i}`, { access: i % 2 === 0 }),
      );
      const results = await Promise.all(
        attempts.map((attempt, i) => redeem(`code-${t.n}-c`, T0 + i, attempt)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      for (const [i, attempt] of attempts.entries()) {
        const stored = await t.stores.refreshTokens.findRefreshToken(attempt.refreshToken!.tokenHash);
        expect(stored).toEqual(results[i] ? attempt.refreshToken : null);
        if (attempt.accessToken !== null) {
          const storedAccess = await t.stores.accessTokens.findAccessToken(attempt.accessToken.tokenHash);
          expect(storedAccess).toEqual(results[i] ? attempt.accessToken : null);
        }
      }
    });

    it('createAuthorizationCodeWithGrant stores the grant and its code together, or neither', async (context) => {
      const create = t.stores.codes.createAuthorizationCodeWithGrant?.bind(t.stores.codes);
      if (!create) return context.skip();
      const grant = t.grant('with-code');
      const code = t.code('with-code', { grantId: grant.id });
      await create(grant, code);
      expect(await t.stores.grants.findGrant(grant.id)).toEqual(grant);
      expect(await t.stores.codes.findAuthorizationCode(code.codeHash)).toEqual(code);

      // The same code hash again: the code's insert fails, so the second grant is not stored either.
      const orphan = t.grant('orphan');
      await expect(create(orphan, { ...code, grantId: orphan.id })).rejects.toThrow();
      expect(await t.stores.grants.findGrant(orphan.id)).toBeNull();
      expect(await t.stores.codes.findAuthorizationCode(code.codeHash)).toEqual(code);
    });
  });
}
