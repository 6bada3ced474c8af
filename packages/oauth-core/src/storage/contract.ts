/**
 * The store contract as one reusable Vitest suite. Every implementation (the in-memory twin here,
 * the Drizzle stores in apps/auth-server) runs it:
 *
 * ```ts
 * describeStoreContract('drizzle on PGlite', async () => {
 *   const db = await openTestDatabase();
 *   const stores = createDrizzleStores(db);
 *   return { stores, keys: stores.keys, seed: (data) => applySeed(db, data), close: () => db.close() };
 * });
 * ```
 *
 * `makeStores` is called before every test and `close` after it. Tests use ids unique to the test
 * (and list assertions check inclusion), so a fixture may share one database across tests.
 * Written against the interfaces only.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  AuthorizationCode,
  Client,
  DeviceCode,
  Grant,
  OpaqueAccessToken,
  RefreshToken,
  Resource,
  User,
} from '../model.js';
import type { ProtocolStores } from './index.js';
import type { KeyStore, SigningKeyRecord } from './keys.js';
import type { StoreSeed } from './memory.js';

export interface StoreContractFixture {
  stores: ProtocolStores;
  /** When given, the `KeyStore` part of the contract runs too. */
  keys?: KeyStore;
  /** Inserts or replaces clients, resources and users (idempotent). */
  seed(data: StoreSeed): Promise<void> | void;
  close(): Promise<void> | void;
}

const T0 = 1_700_000_000;
let run = 0;

export function describeStoreContract(
  name: string,
  makeStores: () => Promise<StoreContractFixture> | StoreContractFixture,
): void {
  describe(`store contract: ${name}`, () => {
    let fixture: StoreContractFixture;
    let stores: ProtocolStores;
    let n = '';

    beforeEach(async () => {
      run += 1;
      // Unique per test and per process, so a shared database never sees a duplicate key.
      n = `${run}-${Math.floor(performance.timeOrigin + performance.now()).toString(36)}`;
      fixture = await makeStores();
      stores = fixture.stores;
    });
    afterEach(async () => {
      await fixture.close();
    });

    const client = (over: Partial<Client> = {}): Client => ({
      clientId: `client-${n}`,
      clientName: 'Contract client',
      secretHash: 'hmac-sha256$abc',
      redirectUris: ['https://rp.example/cb', 'http://127.0.0.1:8080/cb'],
      postLogoutRedirectUris: ['https://rp.example/'],
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'orders.read'],
      skipConsent: false,
      idTokenSigningAlg: 'RS256',
      allowedCorsOrigins: ['https://rp.example'],
      backchannelLogoutUri: 'https://rp.example/bcl',
      frontchannelLogoutUri: null,
      refreshTokensWithoutOfflineAccess: true,
      refreshTokenAbsoluteTtl: 2_592_000,
      refreshTokenSlidingTtl: 1_209_600,
      dpopBoundAccessTokens: true,
      dpopNonceRequired: false,
      requirePushedAuthorizationRequests: true,
      tokenExchange: {
        audiences: [`https://api-${n}.example`],
        scopes: ['orders.read'],
        subjectTokenTypes: ['urn:ietf:params:oauth:token-type:access_token'],
      },
      keepOfflineAccessOnLogout: true,
      authMethods: ['private_key_jwt'],
      jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x-coordinate', y: 'y-coordinate', kid: 'k1' }] },
      jwksUri: null,
      requireSignedRequestObject: true,
      profile: 'fapi2',
      ...over,
    });
    const resource = (over: Partial<Resource> = {}): Resource => ({
      id: `https://api-${n}.example`,
      scopes: ['orders.read', 'orders.write'],
      accessTokenFormat: 'opaque',
      accessTokenTtl: 300,
      accessTokenSigningAlg: 'ES256',
      secretHash: null,
      claims: ['email', 'name'],
      ...over,
    });
    const user = (over: Partial<User> = {}): User => ({
      sub: `sub-${n}`,
      username: `user-${n}`,
      passwordHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA',
      name: 'Contract User',
      email: `user-${n}@example.com`,
      emailVerified: true,
      allowedScopes: null,
      ...over,
    });
    const grant = (suffix = 'g', over: Partial<Grant> = {}): Grant => ({
      id: `grant-${n}-${suffix}`,
      clientId: `client-${n}`,
      sub: `sub-${n}`,
      scopes: ['openid', 'orders.read'],
      resources: [],
      sid: `sid-${n}`,
      authTime: T0 - 10,
      createdAt: T0,
      revokedAt: null,
      ...over,
    });
    const code = (suffix = 'c', over: Partial<AuthorizationCode> = {}): AuthorizationCode => ({
      codeHash: `code-${n}-${suffix}`,
      grantId: `grant-${n}-g`,
      clientId: `client-${n}`,
      sub: `sub-${n}`,
      redirectUri: 'https://rp.example/cb',
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      nonce: 'n-0S6_WzA2Mj',
      scopes: ['openid', 'orders.read'],
      resources: [`https://api-${n}.example`],
      sid: `sid-${n}`,
      authTime: T0 - 10,
      expiresAt: T0 + 60,
      usedAt: null,
      dpopJkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I',
      ...over,
    });
    const refresh = (suffix = 'r', over: Partial<RefreshToken> = {}): RefreshToken => ({
      tokenHash: `rt-${n}-${suffix}`,
      grantId: `grant-${n}-g`,
      clientId: `client-${n}`,
      sub: `sub-${n}`,
      scopes: ['openid', 'offline_access', 'orders.read'],
      resources: [],
      parentHash: null,
      createdAt: T0,
      expiresAt: T0 + 1_209_600,
      usedAt: null,
      revokedAt: null,
      dpopJkt: null,
      ...over,
    });
    const access = (suffix = 'a', over: Partial<OpaqueAccessToken> = {}): OpaqueAccessToken => ({
      tokenHash: `at-${n}-${suffix}`,
      grantId: `grant-${n}-g`,
      clientId: `client-${n}`,
      sub: `sub-${n}`,
      scopes: ['openid', 'orders.read'],
      audience: [`https://api-${n}.example`],
      issuedAt: T0,
      expiresAt: T0 + 300,
      revokedAt: null,
      dpopJkt: null,
      claims: { email: `user-${n}@example.com`, email_verified: true, nested: { a: [1, 'two'] } },
      ...over,
    });

    const deviceCode = (suffix = 'd', over: Partial<DeviceCode> = {}): DeviceCode => ({
      deviceCodeHash: `dc-${n}-${suffix}`,
      userCodeHash: `uc-${n}-${suffix}`,
      clientId: `client-${n}`,
      scopes: ['openid', 'offline_access', 'orders.read'],
      resources: [`https://api-${n}.example`],
      createdAt: T0,
      expiresAt: T0 + 600,
      interval: 5,
      lastPolledAt: null,
      status: 'pending',
      grantId: null,
      sub: null,
      decidedAt: null,
      redeemedAt: null,
      ...over,
    });

    describe('ClientStore, ResourceStore, UserStore', () => {
      it('finds a seeded client with every field intact, and null for an unknown id', async () => {
        const c = client();
        const pub = client({
          clientId: `public-${n}`,
          secretHash: null,
          frontchannelLogoutUri: 'https://rp.example/fcl',
          dpopBoundAccessTokens: false,
          dpopNonceRequired: true,
          requirePushedAuthorizationRequests: false,
          tokenExchange: null,
          keepOfflineAccessOnLogout: false,
        });
        await fixture.seed({ clients: [c, pub] });
        expect(await stores.clients.findClient(c.clientId)).toEqual(c);
        expect(await stores.clients.findClient(pub.clientId)).toEqual(pub);
        expect(await stores.clients.findClient(`unknown-${n}`)).toBeNull();
      });

      it('reseeding replaces a client (idempotent seed)', async () => {
        await fixture.seed({ clients: [client()] });
        await fixture.seed({ clients: [client({ clientName: 'Renamed' })] });
        expect((await stores.clients.findClient(`client-${n}`))?.clientName).toBe('Renamed');
      });

      it('finds a resource by exact id and lists every resource', async () => {
        const r = resource();
        const jwt = resource({
          id: `jwt-${n}`,
          accessTokenFormat: 'jwt',
          secretHash: 'hmac-sha256$x',
          claims: [],
        });
        await fixture.seed({ resources: [r, jwt] });
        expect(await stores.resources.findResource(r.id)).toEqual(r);
        expect(await stores.resources.findResource(r.id.toUpperCase())).toBeNull();
        expect(await stores.resources.findResource(`${r.id}/`)).toBeNull();
        const all = await stores.resources.listResources();
        expect(all).toContainEqual(r);
        expect(all).toContainEqual(jwt);
      });

      it('finds a user by sub and by exact, case-sensitive username', async () => {
        const u = user();
        const restricted = user({
          sub: `sub2-${n}`,
          username: `other-${n}`,
          name: null,
          email: null,
          emailVerified: false,
          allowedScopes: ['openid'],
        });
        await fixture.seed({ users: [u, restricted] });
        expect(await stores.users.findUserBySub(u.sub)).toEqual(u);
        expect(await stores.users.findUserBySub(restricted.sub)).toEqual(restricted);
        expect(await stores.users.findUserByUsername(u.username)).toEqual(u);
        expect(await stores.users.findUserByUsername(u.username.toUpperCase())).toBeNull();
        expect(await stores.users.findUserBySub(`nobody-${n}`)).toBeNull();
        expect(await stores.users.findUserByUsername(`nobody-${n}`)).toBeNull();
      });
    });

    describe('GrantStore', () => {
      it('creates and finds a grant; null for an unknown id', async () => {
        const g = grant('g', {
          resources: ['https://a.example', 'https://b.example'],
          sid: null,
          authTime: null,
        });
        await stores.grants.createGrant(g);
        expect(await stores.grants.findGrant(g.id)).toEqual(g);
        expect(await stores.grants.findGrant(`grant-${n}-missing`)).toBeNull();
      });

      it('findGrantsBySid returns every grant of the session, revoked ones included', async () => {
        const first = grant('s1');
        const second = grant('s2', { clientId: `other-${n}`, revokedAt: T0 + 3 });
        await stores.grants.createGrant(first);
        await stores.grants.createGrant(second);
        await stores.grants.createGrant(grant('s3', { sid: `sid-${n}-other` }));
        await stores.grants.createGrant(grant('s4', { sid: null }));
        const found = await stores.grants.findGrantsBySid(`sid-${n}`);
        expect(found).toHaveLength(2);
        expect(found).toContainEqual(first);
        expect(found).toContainEqual(second);
        expect(await stores.grants.findGrantsBySid(`sid-${n}-none`)).toEqual([]);
      });

      it('revokeGrant marks the grant revoked and is idempotent (keeps the first time)', async () => {
        await stores.grants.createGrant(grant());
        await stores.grants.revokeGrant(`grant-${n}-g`, T0 + 5);
        await stores.grants.revokeGrant(`grant-${n}-g`, T0 + 9);
        expect((await stores.grants.findGrant(`grant-${n}-g`))?.revokedAt).toBe(T0 + 5);
      });

      it('revokeGrant revokes the refresh and opaque access tokens of that grant only', async () => {
        await stores.grants.createGrant(grant());
        await stores.grants.createGrant(grant('other'));
        await stores.refreshTokens.createRefreshToken(refresh('r1'));
        await stores.refreshTokens.createRefreshToken(
          refresh('r2', { parentHash: `rt-${n}-r1`, usedAt: null }),
        );
        await stores.refreshTokens.createRefreshToken(refresh('already', { revokedAt: T0 + 1 }));
        await stores.refreshTokens.createRefreshToken(refresh('r-other', { grantId: `grant-${n}-other` }));
        await stores.accessTokens.createAccessToken(access('a1'));
        await stores.accessTokens.createAccessToken(access('a-other', { grantId: `grant-${n}-other` }));
        await stores.accessTokens.createAccessToken(
          access('a-cc', {
            grantId: null,
            sub: `client-${n}`,
            audience: ['https://api.example'],
            claims: {},
          }),
        );

        await stores.grants.revokeGrant(`grant-${n}-g`, T0 + 7);

        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r1`))?.revokedAt).toBe(T0 + 7);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r2`))?.revokedAt).toBe(T0 + 7);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-already`))?.revokedAt).toBe(T0 + 1);
        expect((await stores.accessTokens.findAccessToken(`at-${n}-a1`))?.revokedAt).toBe(T0 + 7);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r-other`))?.revokedAt).toBeNull();
        expect((await stores.accessTokens.findAccessToken(`at-${n}-a-other`))?.revokedAt).toBeNull();
        expect((await stores.accessTokens.findAccessToken(`at-${n}-a-cc`))?.revokedAt).toBeNull();
        expect((await stores.grants.findGrant(`grant-${n}-other`))?.revokedAt).toBeNull();
      });

      it('revokeGrant of an unknown grant does not throw', async () => {
        await expect(stores.grants.revokeGrant(`grant-${n}-missing`, T0)).resolves.toBeUndefined();
      });
    });

    describe('AuthorizationCodeStore', () => {
      beforeEach(async () => {
        await stores.grants.createGrant(grant());
      });

      it('creates and finds a code with every field; null for an unknown hash', async () => {
        const c = code();
        const noPkce = code('np', { codeChallenge: null, nonce: null, sid: null, resources: [] });
        await stores.codes.createAuthorizationCode(c);
        await stores.codes.createAuthorizationCode(noPkce);
        expect(await stores.codes.findAuthorizationCode(c.codeHash)).toEqual(c);
        expect(await stores.codes.findAuthorizationCode(noPkce.codeHash)).toEqual(noPkce);
        expect(await stores.codes.findAuthorizationCode(`code-${n}-missing`)).toBeNull();
      });

      it('consumeAuthorizationCode is true once, then false; the used code stays findable', async () => {
        await stores.codes.createAuthorizationCode(code());
        expect(await stores.codes.consumeAuthorizationCode(`code-${n}-c`, T0 + 3)).toBe(true);
        expect(await stores.codes.consumeAuthorizationCode(`code-${n}-c`, T0 + 4)).toBe(false);
        expect((await stores.codes.findAuthorizationCode(`code-${n}-c`))?.usedAt).toBe(T0 + 3);
      });

      it('consumeAuthorizationCode is true for exactly one of 10 concurrent calls', async () => {
        await stores.codes.createAuthorizationCode(code());
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => stores.codes.consumeAuthorizationCode(`code-${n}-c`, T0 + i)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('consumeAuthorizationCode of an unknown code is false', async () => {
        expect(await stores.codes.consumeAuthorizationCode(`code-${n}-missing`, T0)).toBe(false);
      });
    });

    describe('RefreshTokenStore', () => {
      beforeEach(async () => {
        await stores.grants.createGrant(grant());
      });

      it('creates and finds a token with every field; null for an unknown hash', async () => {
        const first = refresh('r1');
        const child = refresh('r2', {
          parentHash: first.tokenHash,
          dpopJkt: 'jkt-thumbprint',
          resources: ['https://a.example'],
        });
        await stores.refreshTokens.createRefreshToken(first);
        await stores.refreshTokens.createRefreshToken(child);
        expect(await stores.refreshTokens.findRefreshToken(first.tokenHash)).toEqual(first);
        expect(await stores.refreshTokens.findRefreshToken(child.tokenHash)).toEqual(child);
        expect(await stores.refreshTokens.findRefreshToken(`rt-${n}-missing`)).toBeNull();
      });

      it('markRefreshTokenUsed is true once, then false; the used token stays findable', async () => {
        await stores.refreshTokens.createRefreshToken(refresh());
        expect(await stores.refreshTokens.markRefreshTokenUsed(`rt-${n}-r`, T0 + 2)).toBe(true);
        expect(await stores.refreshTokens.markRefreshTokenUsed(`rt-${n}-r`, T0 + 3)).toBe(false);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r`))?.usedAt).toBe(T0 + 2);
      });

      it('markRefreshTokenUsed is true for exactly one of 10 concurrent calls', async () => {
        await stores.refreshTokens.createRefreshToken(refresh());
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            stores.refreshTokens.markRefreshTokenUsed(`rt-${n}-r`, T0 + i),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('markRefreshTokenUsed is false for a revoked or unknown token', async () => {
        await stores.refreshTokens.createRefreshToken(refresh('rev', { revokedAt: T0 }));
        expect(await stores.refreshTokens.markRefreshTokenUsed(`rt-${n}-rev`, T0 + 1)).toBe(false);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-rev`))?.usedAt).toBeNull();
        expect(await stores.refreshTokens.markRefreshTokenUsed(`rt-${n}-missing`, T0)).toBe(false);
      });

      it('revokeRefreshToken revokes one token, idempotently, and ignores unknown hashes', async () => {
        await stores.refreshTokens.createRefreshToken(refresh('r1'));
        await stores.refreshTokens.createRefreshToken(refresh('r2'));
        await stores.refreshTokens.revokeRefreshToken(`rt-${n}-r1`, T0 + 4);
        await stores.refreshTokens.revokeRefreshToken(`rt-${n}-r1`, T0 + 8);
        await stores.refreshTokens.revokeRefreshToken(`rt-${n}-missing`, T0 + 8);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r1`))?.revokedAt).toBe(T0 + 4);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r2`))?.revokedAt).toBeNull();
        expect(await stores.refreshTokens.markRefreshTokenUsed(`rt-${n}-r1`, T0 + 9)).toBe(false);
      });
    });

    // The optional one-read / one-statement fast paths of code redemption and refresh rotation
    // (grants/redemption.ts). Each test is skipped for a store that does not offer the method.
    describe('fast paths of redemption and rotation (optional methods)', () => {
      beforeEach(async () => {
        await stores.grants.createGrant(grant());
        await fixture.seed({ users: [user()] });
      });
      const issued = (suffix: string, over: { access?: boolean; refresh?: boolean } = {}) => ({
        accessToken:
          over.access === false
            ? null
            : access(`new-${suffix}`, {
                dpopJkt: 'jkt-new',
                claims: { email: 'a@b.example', act: { sub: 'x' } },
              }),
        refreshToken:
          over.refresh === false
            ? null
            : refresh(`new-${suffix}`, {
                parentHash: `rt-${n}-r`,
                resources: ['https://a.example'],
                dpopJkt: 'jkt',
              }),
      });

      it('findRefreshTokenWithGrantAndUser: the token, its grant and its user; nulls when gone', async (context) => {
        const find = stores.refreshTokens.findRefreshTokenWithGrantAndUser?.bind(stores.refreshTokens);
        if (!find) return context.skip();
        const token = refresh('r', { dpopJkt: 'jkt', resources: ['https://a.example'], usedAt: T0 + 1 });
        await stores.refreshTokens.createRefreshToken(token);
        expect(await find(token.tokenHash)).toEqual({ token, grant: grant(), user: user() });
        const orphan = refresh('orphan', { grantId: `grant-${n}-missing`, sub: `sub-${n}-missing` });
        await stores.refreshTokens.createRefreshToken(orphan);
        expect(await find(orphan.tokenHash)).toEqual({ token: orphan, grant: null, user: null });
        expect(await find(`rt-${n}-missing`)).toBeNull();
      });

      it('findAuthorizationCodeWithGrantAndUser: the code, its grant and its user; nulls when gone', async (context) => {
        const find = stores.codes.findAuthorizationCodeWithGrantAndUser?.bind(stores.codes);
        if (!find) return context.skip();
        const c = code('c', { usedAt: T0 + 2 });
        await stores.codes.createAuthorizationCode(c);
        expect(await find(c.codeHash)).toEqual({ code: c, grant: grant(), user: user() });
        const orphan = code('orphan', {
          grantId: `grant-${n}-missing`,
          sub: `sub-${n}-missing`,
          nonce: null,
        });
        await stores.codes.createAuthorizationCode(orphan);
        expect(await find(orphan.codeHash)).toEqual({ code: orphan, grant: null, user: null });
        expect(await find(`code-${n}-missing`)).toBeNull();
      });

      it('rotateRefreshToken marks used and stores the successor once; then false and nothing written', async (context) => {
        const rotate = stores.refreshTokens.rotateRefreshToken?.bind(stores.refreshTokens);
        if (!rotate) return context.skip();
        await stores.refreshTokens.createRefreshToken(refresh());
        const first = issued('1');
        expect(await rotate(`rt-${n}-r`, T0 + 2, first)).toBe(true);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r`))?.usedAt).toBe(T0 + 2);
        expect(await stores.refreshTokens.findRefreshToken(first.refreshToken!.tokenHash)).toEqual(
          first.refreshToken,
        );
        expect(await stores.accessTokens.findAccessToken(first.accessToken!.tokenHash)).toEqual(
          first.accessToken,
        );

        const second = issued('2');
        expect(await rotate(`rt-${n}-r`, T0 + 3, second)).toBe(false);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-r`))?.usedAt).toBe(T0 + 2);
        expect(await stores.refreshTokens.findRefreshToken(second.refreshToken!.tokenHash)).toBeNull();
        expect(await stores.accessTokens.findAccessToken(second.accessToken!.tokenHash)).toBeNull();
      });

      it('rotateRefreshToken is false for a revoked or unknown token and writes nothing', async (context) => {
        const rotate = stores.refreshTokens.rotateRefreshToken?.bind(stores.refreshTokens);
        if (!rotate) return context.skip();
        await stores.refreshTokens.createRefreshToken(refresh('rev', { revokedAt: T0 }));
        const attempt = issued('rev');
        expect(await rotate(`rt-${n}-rev`, T0 + 1, attempt)).toBe(false);
        expect(await rotate(`rt-${n}-missing`, T0 + 1, attempt)).toBe(false);
        expect((await stores.refreshTokens.findRefreshToken(`rt-${n}-rev`))?.usedAt).toBeNull();
        expect(await stores.refreshTokens.findRefreshToken(attempt.refreshToken!.tokenHash)).toBeNull();
        expect(await stores.accessTokens.findAccessToken(attempt.accessToken!.tokenHash)).toBeNull();
      });

      it('rotateRefreshToken stores only what is issued (no opaque access token, or no refresh token)', async (context) => {
        const rotate = stores.refreshTokens.rotateRefreshToken?.bind(stores.refreshTokens);
        if (!rotate) return context.skip();
        await stores.refreshTokens.createRefreshToken(refresh('a'));
        await stores.refreshTokens.createRefreshToken(refresh('b'));
        const onlyRefresh = issued('only-refresh', { access: false });
        const onlyAccess = issued('only-access', { refresh: false });
        expect(await rotate(`rt-${n}-a`, T0 + 1, onlyRefresh)).toBe(true);
        expect(await rotate(`rt-${n}-b`, T0 + 1, onlyAccess)).toBe(true);
        expect(await stores.refreshTokens.findRefreshToken(onlyRefresh.refreshToken!.tokenHash)).toEqual(
          onlyRefresh.refreshToken,
        );
        expect(await stores.accessTokens.findAccessToken(onlyAccess.accessToken!.tokenHash)).toEqual(
          onlyAccess.accessToken,
        );
        expect(await rotate(`rt-${n}-a`, T0 + 2, { accessToken: null, refreshToken: null })).toBe(false);
      });

      it('rotateRefreshToken: exactly one of 10 concurrent calls wins, and only its writes exist', async (context) => {
        const rotate = stores.refreshTokens.rotateRefreshToken?.bind(stores.refreshTokens);
        if (!rotate) return context.skip();
        await stores.refreshTokens.createRefreshToken(refresh());
        const attempts = Array.from({ length: 10 }, (_, i) => issued(`race-${i}`));
        const results = await Promise.all(attempts.map((attempt, i) => rotate(`rt-${n}-r`, T0 + i, attempt)));
        expect(results.filter(Boolean)).toHaveLength(1);
        for (const [i, attempt] of attempts.entries()) {
          const stored = await stores.refreshTokens.findRefreshToken(attempt.refreshToken!.tokenHash);
          const storedAccess = await stores.accessTokens.findAccessToken(attempt.accessToken!.tokenHash);
          expect(stored).toEqual(results[i] ? attempt.refreshToken : null);
          expect(storedAccess).toEqual(results[i] ? attempt.accessToken : null);
        }
      });

      it('redeemAuthorizationCode consumes once and stores the tokens; then false and nothing written', async (context) => {
        const redeem = stores.codes.redeemAuthorizationCode?.bind(stores.codes);
        if (!redeem) return context.skip();
        await stores.codes.createAuthorizationCode(code());
        const first = issued('c1');
        expect(await redeem(`code-${n}-c`, T0 + 3, first)).toBe(true);
        expect((await stores.codes.findAuthorizationCode(`code-${n}-c`))?.usedAt).toBe(T0 + 3);
        expect(await stores.refreshTokens.findRefreshToken(first.refreshToken!.tokenHash)).toEqual(
          first.refreshToken,
        );
        expect(await stores.accessTokens.findAccessToken(first.accessToken!.tokenHash)).toEqual(
          first.accessToken,
        );

        const second = issued('c2');
        expect(await redeem(`code-${n}-c`, T0 + 4, second)).toBe(false);
        expect(await redeem(`code-${n}-missing`, T0 + 4, second)).toBe(false);
        expect((await stores.codes.findAuthorizationCode(`code-${n}-c`))?.usedAt).toBe(T0 + 3);
        expect(await stores.refreshTokens.findRefreshToken(second.refreshToken!.tokenHash)).toBeNull();
        expect(await stores.accessTokens.findAccessToken(second.accessToken!.tokenHash)).toBeNull();
      });

      it('redeemAuthorizationCode: exactly one of 10 concurrent calls wins, and only its writes exist', async (context) => {
        const redeem = stores.codes.redeemAuthorizationCode?.bind(stores.codes);
        if (!redeem) return context.skip();
        await stores.codes.createAuthorizationCode(code());
        const attempts = Array.from({ length: 10 }, (_, i) =>
          issued(`code-race-${i}`, { access: i % 2 === 0 }),
        );
        const results = await Promise.all(
          attempts.map((attempt, i) => redeem(`code-${n}-c`, T0 + i, attempt)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        for (const [i, attempt] of attempts.entries()) {
          const stored = await stores.refreshTokens.findRefreshToken(attempt.refreshToken!.tokenHash);
          expect(stored).toEqual(results[i] ? attempt.refreshToken : null);
          if (attempt.accessToken !== null) {
            const storedAccess = await stores.accessTokens.findAccessToken(attempt.accessToken.tokenHash);
            expect(storedAccess).toEqual(results[i] ? attempt.accessToken : null);
          }
        }
      });
    });

    describe('AccessTokenStore', () => {
      it('creates and finds an opaque token with claims; null for an unknown hash', async () => {
        const a = access();
        const cc = access('cc', { grantId: null, sub: `client-${n}`, claims: {}, dpopJkt: 'jkt' });
        await stores.accessTokens.createAccessToken(a);
        await stores.accessTokens.createAccessToken(cc);
        expect(await stores.accessTokens.findAccessToken(a.tokenHash)).toEqual(a);
        expect(await stores.accessTokens.findAccessToken(cc.tokenHash)).toEqual(cc);
        expect(await stores.accessTokens.findAccessToken(`at-${n}-missing`)).toBeNull();
      });

      it('revokeAccessToken revokes one token, idempotently, and ignores unknown hashes', async () => {
        await stores.accessTokens.createAccessToken(access('a1'));
        await stores.accessTokens.createAccessToken(access('a2'));
        await stores.accessTokens.revokeAccessToken(`at-${n}-a1`, T0 + 1);
        await stores.accessTokens.revokeAccessToken(`at-${n}-a1`, T0 + 2);
        await stores.accessTokens.revokeAccessToken(`at-${n}-missing`, T0 + 2);
        expect((await stores.accessTokens.findAccessToken(`at-${n}-a1`))?.revokedAt).toBe(T0 + 1);
        expect((await stores.accessTokens.findAccessToken(`at-${n}-a2`))?.revokedAt).toBeNull();
      });

      it('denylists a JWT access token by jti, idempotently', async () => {
        expect(await stores.accessTokens.isJwtAccessTokenRevoked(`jti-${n}`)).toBe(false);
        await stores.accessTokens.revokeJwtAccessToken(`jti-${n}`, T0 + 300);
        await stores.accessTokens.revokeJwtAccessToken(`jti-${n}`, T0 + 300);
        expect(await stores.accessTokens.isJwtAccessTokenRevoked(`jti-${n}`)).toBe(true);
        expect(await stores.accessTokens.isJwtAccessTokenRevoked(`jti-${n}-other`)).toBe(false);
      });
    });

    describe('DeviceCodeStore', () => {
      it('creates and finds a code by device-code hash and by user-code hash; null when unknown', async () => {
        const pending = deviceCode();
        const decided = deviceCode('x', {
          resources: [],
          lastPolledAt: T0 + 5,
          interval: 10,
          status: 'redeemed',
          grantId: `grant-${n}-g`,
          sub: `sub-${n}`,
          decidedAt: T0 + 7,
          redeemedAt: T0 + 9,
        });
        expect(await stores.deviceCodes.createDeviceCode(pending)).toBe(true);
        expect(await stores.deviceCodes.createDeviceCode(decided)).toBe(true);
        expect(await stores.deviceCodes.findDeviceCode(pending.deviceCodeHash)).toEqual(pending);
        expect(await stores.deviceCodes.findDeviceCode(decided.deviceCodeHash)).toEqual(decided);
        expect(await stores.deviceCodes.findDeviceCodeByUserCode(pending.userCodeHash)).toEqual(pending);
        expect(await stores.deviceCodes.findDeviceCodeByUserCode(decided.userCodeHash)).toEqual(decided);
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-missing`)).toBeNull();
        expect(await stores.deviceCodes.findDeviceCodeByUserCode(`uc-${n}-missing`)).toBeNull();
        expect(await stores.deviceCodes.findDeviceCode(pending.userCodeHash)).toBeNull();
      });

      it('createDeviceCode refuses a user code already taken and writes nothing', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode('a'));
        const clash = deviceCode('b', { userCodeHash: `uc-${n}-a` });
        expect(await stores.deviceCodes.createDeviceCode(clash)).toBe(false);
        expect(await stores.deviceCodes.findDeviceCode(clash.deviceCodeHash)).toBeNull();
        expect((await stores.deviceCodes.findDeviceCodeByUserCode(`uc-${n}-a`))?.deviceCodeHash).toBe(
          `dc-${n}-a`,
        );
      });

      it('approve moves pending → approved once, recording grant, user and time', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        const approval = { grantId: `grant-${n}-g`, sub: `sub-${n}`, at: T0 + 30 };
        expect(await stores.deviceCodes.approveDeviceCode(`dc-${n}-d`, approval)).toBe(true);
        expect(await stores.deviceCodes.approveDeviceCode(`dc-${n}-d`, { ...approval, at: T0 + 31 })).toBe(
          false,
        );
        expect(await stores.deviceCodes.denyDeviceCode(`dc-${n}-d`, { sub: null, at: T0 + 32 })).toBe(false);
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-d`)).toMatchObject({
          status: 'approved',
          grantId: `grant-${n}-g`,
          sub: `sub-${n}`,
          decidedAt: T0 + 30,
          redeemedAt: null,
        });
      });

      it('deny moves pending → denied once; an approval afterwards fails', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        expect(await stores.deviceCodes.denyDeviceCode(`dc-${n}-d`, { sub: `sub-${n}`, at: T0 + 20 })).toBe(
          true,
        );
        expect(await stores.deviceCodes.denyDeviceCode(`dc-${n}-d`, { sub: `sub-${n}`, at: T0 + 21 })).toBe(
          false,
        );
        const approval = { grantId: `grant-${n}-g`, sub: `sub-${n}`, at: T0 + 22 };
        expect(await stores.deviceCodes.approveDeviceCode(`dc-${n}-d`, approval)).toBe(false);
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-d`)).toMatchObject({
          status: 'denied',
          grantId: null,
          sub: `sub-${n}`,
          decidedAt: T0 + 20,
        });
      });

      it('approve and deny fail at or after expiry and for unknown codes', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        const approval = { grantId: `grant-${n}-g`, sub: `sub-${n}`, at: T0 + 600 };
        expect(await stores.deviceCodes.approveDeviceCode(`dc-${n}-d`, approval)).toBe(false);
        expect(await stores.deviceCodes.denyDeviceCode(`dc-${n}-d`, { sub: null, at: T0 + 601 })).toBe(false);
        expect((await stores.deviceCodes.findDeviceCode(`dc-${n}-d`))?.status).toBe('pending');
        expect(await stores.deviceCodes.approveDeviceCode(`dc-${n}-missing`, { ...approval, at: T0 })).toBe(
          false,
        );
        expect(await stores.deviceCodes.denyDeviceCode(`dc-${n}-missing`, { sub: null, at: T0 })).toBe(false);
      });

      it('exactly one of 10 concurrent approvals wins', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            stores.deviceCodes.approveDeviceCode(`dc-${n}-d`, {
              grantId: `grant-${n}-${i}`,
              sub: `sub-${n}`,
              at: T0 + 1,
            }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('recordDeviceCodePoll returns the previous poll time and interval, then stores the new time', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        expect(await stores.deviceCodes.recordDeviceCodePoll(`dc-${n}-d`, T0 + 5)).toEqual({
          previousPollAt: null,
          interval: 5,
        });
        await stores.deviceCodes.increaseDeviceCodeInterval(`dc-${n}-d`, 5);
        expect(await stores.deviceCodes.recordDeviceCodePoll(`dc-${n}-d`, T0 + 7)).toEqual({
          previousPollAt: T0 + 5,
          interval: 10,
        });
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-d`)).toMatchObject({
          lastPolledAt: T0 + 7,
          interval: 10,
        });
        expect(await stores.deviceCodes.recordDeviceCodePoll(`dc-${n}-missing`, T0)).toBeNull();
      });

      it('10 concurrent polls: exactly one sees no previous poll, and each previous time is distinct', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        const polls = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            stores.deviceCodes.recordDeviceCodePoll(`dc-${n}-d`, T0 + 10 + i),
          ),
        );
        const previous = polls.map((poll) => poll?.previousPollAt);
        expect(previous.filter((value) => value === null)).toHaveLength(1);
        expect(new Set(previous).size).toBe(10);
      });

      it('increaseDeviceCodeInterval adds up under concurrency', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        await Promise.all(
          Array.from({ length: 4 }, () => stores.deviceCodes.increaseDeviceCodeInterval(`dc-${n}-d`, 5)),
        );
        expect((await stores.deviceCodes.findDeviceCode(`dc-${n}-d`))?.interval).toBe(25);
      });

      it('redeem moves approved → redeemed once; never from pending or denied', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode('ok'));
        await stores.deviceCodes.createDeviceCode(deviceCode('no'));
        expect(await stores.deviceCodes.redeemDeviceCode(`dc-${n}-ok`, T0 + 40)).toBe(false);
        await stores.deviceCodes.approveDeviceCode(`dc-${n}-ok`, {
          grantId: `grant-${n}-g`,
          sub: `sub-${n}`,
          at: T0 + 30,
        });
        await stores.deviceCodes.denyDeviceCode(`dc-${n}-no`, { sub: `sub-${n}`, at: T0 + 30 });
        expect(await stores.deviceCodes.redeemDeviceCode(`dc-${n}-no`, T0 + 40)).toBe(false);
        expect(await stores.deviceCodes.redeemDeviceCode(`dc-${n}-ok`, T0 + 41)).toBe(true);
        expect(await stores.deviceCodes.redeemDeviceCode(`dc-${n}-ok`, T0 + 42)).toBe(false);
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-ok`)).toMatchObject({
          status: 'redeemed',
          redeemedAt: T0 + 41,
          grantId: `grant-${n}-g`,
        });
        expect((await stores.deviceCodes.findDeviceCode(`dc-${n}-no`))?.status).toBe('denied');
        expect(await stores.deviceCodes.redeemDeviceCode(`dc-${n}-missing`, T0)).toBe(false);
      });

      it('exactly one of 10 concurrent redemptions wins', async () => {
        await stores.deviceCodes.createDeviceCode(deviceCode());
        await stores.deviceCodes.approveDeviceCode(`dc-${n}-d`, {
          grantId: `grant-${n}-g`,
          sub: `sub-${n}`,
          at: T0 + 1,
        });
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => stores.deviceCodes.redeemDeviceCode(`dc-${n}-d`, T0 + 2 + i)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('deleteExpiredDeviceCodes removes codes expired at or before the given time only', async () => {
        // Far in the past, so this never touches the other tests' codes in a shared database.
        const past = T0 - 100_000;
        await stores.deviceCodes.createDeviceCode(
          deviceCode('old', { createdAt: past - 600, expiresAt: past }),
        );
        await stores.deviceCodes.createDeviceCode(
          deviceCode('live', { createdAt: past - 500, expiresAt: past + 1 }),
        );
        await stores.deviceCodes.deleteExpiredDeviceCodes(past);
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-old`)).toBeNull();
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-live`)).not.toBeNull();
      });
    });

    describe('transaction', () => {
      it('commits every write and returns the value of work', async () => {
        const value = await stores.transaction(async (tx) => {
          await tx.grants.createGrant(grant());
          await tx.codes.createAuthorizationCode(code());
          await tx.refreshTokens.createRefreshToken(refresh());
          await tx.accessTokens.createAccessToken(access());
          return 42;
        });
        expect(value).toBe(42);
        expect(await stores.grants.findGrant(`grant-${n}-g`)).not.toBeNull();
        expect(await stores.codes.findAuthorizationCode(`code-${n}-c`)).not.toBeNull();
        expect(await stores.refreshTokens.findRefreshToken(`rt-${n}-r`)).not.toBeNull();
        expect(await stores.accessTokens.findAccessToken(`at-${n}-a`)).not.toBeNull();
      });

      it('sees its own writes inside the transaction', async () => {
        await stores.transaction(async (tx) => {
          await tx.grants.createGrant(grant());
          expect((await tx.grants.findGrant(`grant-${n}-g`))?.id).toBe(`grant-${n}-g`);
        });
      });

      it('rolls back every write when work throws, and rethrows the same error', async () => {
        await stores.grants.createGrant(grant('existing'));
        await stores.codes.createAuthorizationCode(code('existing', { grantId: `grant-${n}-existing` }));
        await stores.refreshTokens.createRefreshToken(
          refresh('existing', { grantId: `grant-${n}-existing` }),
        );
        await stores.accessTokens.createAccessToken(access('existing', { grantId: `grant-${n}-existing` }));
        await stores.deviceCodes.createDeviceCode(deviceCode('existing'));
        const failure = new Error('boom');

        const outcome = stores.transaction(async (tx) => {
          await tx.grants.createGrant(grant());
          await tx.codes.createAuthorizationCode(code());
          await tx.refreshTokens.createRefreshToken(refresh());
          await tx.accessTokens.createAccessToken(access());
          expect(await tx.codes.consumeAuthorizationCode(`code-${n}-existing`, T0 + 1)).toBe(true);
          expect(await tx.refreshTokens.markRefreshTokenUsed(`rt-${n}-existing`, T0 + 1)).toBe(true);
          await tx.grants.revokeGrant(`grant-${n}-existing`, T0 + 1);
          await tx.accessTokens.revokeJwtAccessToken(`jti-${n}`, T0 + 300);
          expect(await tx.deviceCodes.createDeviceCode(deviceCode('new'))).toBe(true);
          expect(
            await tx.deviceCodes.approveDeviceCode(`dc-${n}-existing`, {
              grantId: `grant-${n}-existing`,
              sub: `sub-${n}`,
              at: T0 + 1,
            }),
          ).toBe(true);
          await tx.deviceCodes.recordDeviceCodePoll(`dc-${n}-existing`, T0 + 1);
          await tx.deviceCodes.increaseDeviceCodeInterval(`dc-${n}-existing`, 5);
          throw failure;
        });
        await expect(outcome).rejects.toBe(failure);

        expect(await stores.grants.findGrant(`grant-${n}-g`)).toBeNull();
        expect(await stores.codes.findAuthorizationCode(`code-${n}-c`)).toBeNull();
        expect(await stores.refreshTokens.findRefreshToken(`rt-${n}-r`)).toBeNull();
        expect(await stores.accessTokens.findAccessToken(`at-${n}-a`)).toBeNull();
        expect((await stores.codes.findAuthorizationCode(`code-${n}-existing`))?.usedAt).toBeNull();
        const rt = await stores.refreshTokens.findRefreshToken(`rt-${n}-existing`);
        expect(rt?.usedAt).toBeNull();
        expect(rt?.revokedAt).toBeNull();
        expect((await stores.grants.findGrant(`grant-${n}-existing`))?.revokedAt).toBeNull();
        expect((await stores.accessTokens.findAccessToken(`at-${n}-existing`))?.revokedAt).toBeNull();
        expect(await stores.accessTokens.isJwtAccessTokenRevoked(`jti-${n}`)).toBe(false);
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-new`)).toBeNull();
        expect(await stores.deviceCodes.findDeviceCode(`dc-${n}-existing`)).toEqual(deviceCode('existing'));
        // The rolled-back consumption leaves the code usable.
        expect(await stores.codes.consumeAuthorizationCode(`code-${n}-existing`, T0 + 2)).toBe(true);
      });

      it('concurrent transactions racing on one code commit exactly one winner', async () => {
        await stores.grants.createGrant(grant());
        await stores.codes.createAuthorizationCode(code());
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            stores.transaction(async (tx) => {
              if (!(await tx.codes.consumeAuthorizationCode(`code-${n}-c`, T0 + 1))) return false;
              await tx.accessTokens.createAccessToken(access(`race-${i}`));
              return true;
            }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

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
        const keys = fixture.keys;
        if (keys === undefined) {
          context.skip();
          return;
        }
        const a = key(`kid-a-${n}`, T0);
        const b = key(`kid-b-${n}`, T0 + 1);
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
  });
}
