import { afterEach, beforeEach } from 'vitest';
import type {
  AuthorizationCode,
  Client,
  DeviceCode,
  Grant,
  OpaqueAccessToken,
  RefreshToken,
  Resource,
  User,
} from '../../src/model.js';
import type { ProtocolStores } from '../../src/storage/index.js';
import type { KeyStore } from '../../src/storage/keys.js';
import type { StoreSeed } from '../../src/storage/memory.js';

export interface StoreContractFixture {
  stores: ProtocolStores;
  /** When given, the `KeyStore` part of the contract runs too. */
  keys?: KeyStore;
  /** Inserts or replaces clients, resources and users (idempotent). */
  seed(data: StoreSeed): Promise<void> | void;
  close(): Promise<void> | void;
}

export const T0 = 1_700_000_000;
let run = 0;

/**
 * What every part of the contract reads: the fixture and stores of the running test, `n` (unique
 * per test and per process, so a shared database never sees a duplicate key), and record factories
 * whose ids carry `n`.
 */
export interface ContractContext {
  readonly fixture: StoreContractFixture;
  readonly stores: ProtocolStores;
  readonly n: string;
  client(over?: Partial<Client>): Client;
  resource(over?: Partial<Resource>): Resource;
  user(over?: Partial<User>): User;
  grant(suffix?: string, over?: Partial<Grant>): Grant;
  code(suffix?: string, over?: Partial<AuthorizationCode>): AuthorizationCode;
  refresh(suffix?: string, over?: Partial<RefreshToken>): RefreshToken;
  access(suffix?: string, over?: Partial<OpaqueAccessToken>): OpaqueAccessToken;
  deviceCode(suffix?: string, over?: Partial<DeviceCode>): DeviceCode;
}

/**
 * One fixture per test, made before it and closed after it; `n`, unique per test and per process,
 * so a shared database never sees a duplicate key; `sequence`, the test's number in this process.
 * Read them inside a test or hook.
 */
export function useFixturePerTest<Fixture extends { close(): Promise<void> | void }>(
  make: () => Promise<Fixture> | Fixture,
): { readonly fixture: Fixture; readonly n: string; readonly sequence: number } {
  const state = { fixture: undefined as unknown as Fixture, n: '', sequence: 0 };
  beforeEach(async () => {
    run += 1;
    state.sequence = run;
    state.n = `${run}-${Math.floor(performance.timeOrigin + performance.now()).toString(36)}`;
    state.fixture = await make();
  });
  afterEach(async () => {
    await state.fixture.close();
  });
  return state;
}

/** The store contract's context: `useFixturePerTest` plus the record factories. */
export function useContractContext(
  makeStores: () => Promise<StoreContractFixture> | StoreContractFixture,
): ContractContext {
  const state = useFixturePerTest(makeStores);

  const client = (over: Partial<Client> = {}): Client => ({
    clientId: `client-${state.n}`,
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
      audiences: [`https://api-${state.n}.example`],
      scopes: ['orders.read'],
      subjectTokenTypes: ['urn:ietf:params:oauth:token-type:access_token'],
    },
    keepOfflineAccessOnLogout: true,
    authMethods: ['private_key_jwt'],
    jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x-coordinate', y: 'y-coordinate', kid: 'k1' }] },
    jwksUri: null,
    requireSignedRequestObject: true,
    requestUris: ['https://rp.example/request.jwt#v1'],
    profile: 'fapi2',
    requireMfa: true,
    refreshTokenReuseInterval: 30,
    authorizationSignedResponseAlg: 'ES256',
    requireSignedAuthorizationResponse: true,
    userinfoSignedResponseAlg: 'ES256',
    ...over,
  });
  const resource = (over: Partial<Resource> = {}): Resource => ({
    id: `https://api-${state.n}.example`,
    scopes: ['orders.read', 'orders.write'],
    accessTokenFormat: 'opaque',
    accessTokenTtl: 300,
    accessTokenSigningAlg: 'ES256',
    secretHash: null,
    claims: ['email', 'name'],
    requireMfa: true,
    ...over,
  });
  const user = (over: Partial<User> = {}): User => ({
    sub: `sub-${state.n}`,
    username: `user-${state.n}`,
    passwordHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA',
    name: 'Contract User',
    email: `user-${state.n}@example.com`,
    emailVerified: true,
    allowedScopes: null,
    mfaRequired: true,
    ...over,
  });
  const grant = (suffix = 'g', over: Partial<Grant> = {}): Grant => ({
    id: `grant-${state.n}-${suffix}`,
    clientId: `client-${state.n}`,
    sub: `sub-${state.n}`,
    scopes: ['openid', 'orders.read'],
    resources: [],
    sid: `sid-${state.n}`,
    authTime: T0 - 10,
    amr: ['pwd', 'otp', 'mfa'],
    acr: 'urn:oidc-orders:acr:mfa',
    createdAt: T0,
    revokedAt: null,
    ...over,
  });
  const code = (suffix = 'c', over: Partial<AuthorizationCode> = {}): AuthorizationCode => ({
    codeHash: `code-${state.n}-${suffix}`,
    grantId: `grant-${state.n}-g`,
    clientId: `client-${state.n}`,
    sub: `sub-${state.n}`,
    redirectUri: 'https://rp.example/cb',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    nonce: 'n-0S6_WzA2Mj',
    scopes: ['openid', 'orders.read'],
    resources: [`https://api-${state.n}.example`],
    sid: `sid-${state.n}`,
    authTime: T0 - 10,
    expiresAt: T0 + 60,
    usedAt: null,
    dpopJkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I',
    ...over,
  });
  const refresh = (suffix = 'r', over: Partial<RefreshToken> = {}): RefreshToken => ({
    tokenHash: `rt-${state.n}-${suffix}`,
    grantId: `grant-${state.n}-g`,
    clientId: `client-${state.n}`,
    sub: `sub-${state.n}`,
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
    tokenHash: `at-${state.n}-${suffix}`,
    grantId: `grant-${state.n}-g`,
    clientId: `client-${state.n}`,
    sub: `sub-${state.n}`,
    scopes: ['openid', 'orders.read'],
    audience: [`https://api-${state.n}.example`],
    issuedAt: T0,
    expiresAt: T0 + 300,
    revokedAt: null,
    dpopJkt: null,
    claims: { email: `user-${state.n}@example.com`, email_verified: true, nested: { a: [1, 'two'] } },
    ...over,
  });

  const deviceCode = (suffix = 'd', over: Partial<DeviceCode> = {}): DeviceCode => ({
    deviceCodeHash: `dc-${state.n}-${suffix}`,
    userCodeHash: `uc-${state.n}-${suffix}`,
    clientId: `client-${state.n}`,
    scopes: ['openid', 'offline_access', 'orders.read'],
    resources: [`https://api-${state.n}.example`],
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

  return {
    get fixture() {
      return state.fixture;
    },
    get stores() {
      return state.fixture.stores;
    },
    get n() {
      return state.n;
    },
    client,
    resource,
    user,
    grant,
    code,
    refresh,
    access,
    deviceCode,
  };
}
