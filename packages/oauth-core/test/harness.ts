import { decodeJwt, decodeProtectedHeader } from 'jose';
import { expect } from 'vitest';
import { defaultProtocolConfig } from '../src/config.js';
import { OAuthError, type OAuthErrorCode } from '../src/errors.js';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import type { TokenEndpointDependencies } from '../src/grants/index.js';
import type { GrantRevokedEvent, TokenRequest } from '../src/grants/types.js';
import type { AuthorizationCode, Client, Grant } from '../src/model.js';
import { computeS256Challenge } from '../src/pkce.js';
import { createMemoryStores, createTestClock, createTestKeys, createTestRandom } from '../src/testing.js';
import { hashToken } from '../src/tokens/opaque.js';
import {
  billingResource,
  ISSUER,
  makeClient,
  makeResource,
  makeUser,
  publicClient,
  secrets,
  serviceClient,
} from './fixtures.js';

export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
export const CHALLENGE = computeS256Challenge(VERIFIER);

/** A fresh world: memory stores seeded with the fixtures, a fixed clock, keys, config. */
let envCounter = 0;

export async function createEnv() {
  envCounter += 1;
  const clock = createTestClock();
  const random = createTestRandom(`env-${envCounter}`);
  const keys = await createTestKeys(clock);
  const stores = createMemoryStores({
    clients: [makeClient(), publicClient(), serviceClient()],
    resources: [makeResource(), billingResource()],
    users: [
      makeUser(),
      makeUser({ sub: 'u-bob', username: 'bob', name: null, email: null, emailVerified: false }),
    ],
  });
  const config = defaultProtocolConfig(ISSUER);
  /** Every `events.grantRevoked` the grants reported, in order. */
  const revokedGrants: GrantRevokedEvent[] = [];
  const context: TokenEndpointDependencies = {
    stores,
    clock,
    random,
    signer: keys.signer,
    verifier: keys.verifier,
    config,
    events: { grantRevoked: (event) => revokedGrants.push(event) },
  };
  const T0 = clock.nowSeconds();
  let codeCounter = 0;

  const client = async (clientId: string): Promise<Client> => {
    const found = await stores.clients.findClient(clientId);
    if (found === null) throw new Error(`no client ${clientId}`);
    return found;
  };

  /** A grant and an authorization code for it, written straight to the stores. */
  async function seedCode(
    options: { code?: Partial<AuthorizationCode>; grant?: Partial<Grant> } = {},
  ): Promise<{ code: string; grantId: string; record: AuthorizationCode }> {
    codeCounter += 1;
    const clear = `code-${codeCounter}-${'x'.repeat(32)}`;
    const grantId = `grant-${codeCounter}`;
    const clientId = options.code?.clientId ?? 'web';
    const scopes = options.code?.scopes ?? ['openid', 'profile', 'email', 'offline_access', 'orders.read'];
    await stores.grants.createGrant({
      id: grantId,
      clientId,
      sub: 'u-alice',
      scopes,
      resources: options.code?.resources ?? [],
      sid: 'sid-1',
      authTime: T0 - 30,
      createdAt: clock.nowSeconds(),
      revokedAt: null,
      ...options.grant,
    });
    const record: AuthorizationCode = {
      codeHash: hashToken(clear),
      grantId,
      clientId,
      sub: 'u-alice',
      redirectUri: 'https://app.example.test/cb',
      codeChallenge: CHALLENGE,
      nonce: 'nonce-123',
      scopes,
      resources: [],
      sid: 'sid-1',
      authTime: T0 - 30,
      expiresAt: clock.nowSeconds() + config.authorizationCodeTtl,
      usedAt: null,
      ...options.code,
    };
    await stores.codes.createAuthorizationCode(record);
    return { code: clear, grantId, record };
  }

  async function tokenRequest(
    clientId: string,
    params: Record<string, string | undefined>,
    extra: Partial<TokenRequest> = {},
  ): Promise<TokenRequest> {
    const c = await client(clientId);
    return {
      params,
      resources: [],
      client: c,
      clientAuthenticated: c.secretHash !== null,
      dpopJkt: null,
      ...extra,
    };
  }

  return {
    clock,
    random,
    keys,
    stores,
    config,
    context,
    revokedGrants,
    T0,
    client,
    seedCode,
    tokenRequest,
    secrets,
  };
}

export type Env = Awaited<ReturnType<typeof createEnv>>;

/** Runs `promise` and returns the OAuthError it rejects with (fails the test otherwise). */
export async function oauthError(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OAuthError) return error;
    throw error;
  }
  throw new Error('expected an OAuthError, got success');
}

export async function expectOAuthError(promise: Promise<unknown>, code: OAuthErrorCode, status = 400) {
  const error = await oauthError(promise);
  expect({ code: error.code, status: error.status }).toEqual({ code, status });
  return error;
}

export const jwtHeader = (jwt: string) => decodeProtectedHeader(jwt);
export const jwtClaims = (jwt: string) => decodeJwt(jwt);

/** Runs a real authorization_code exchange and returns its token response. */
export async function obtainTokens(
  env: Env,
  options: { clientId?: string; scopes?: string[]; dpopJkt?: string | null } = {},
) {
  const clientId = options.clientId ?? 'web';
  const { code, grantId } = await env.seedCode({
    code: { clientId, ...(options.scopes ? { scopes: options.scopes } : {}) },
  });
  const request = await env.tokenRequest(
    clientId,
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://app.example.test/cb',
      code_verifier: VERIFIER,
    },
    { dpopJkt: options.dpopJkt ?? null },
  );
  const response = await authorizationCodeGrant.handle(request, env.context);
  return { response, grantId };
}
