import { createHash } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { issueAccessToken } from '../src/tokens/access-token.js';
import { computeAtHash, issueIdToken } from '../src/tokens/id-token.js';
import { hashToken } from '../src/tokens/opaque.js';
import { refreshTokenExpiry, shouldIssueRefreshToken } from '../src/tokens/refresh-token.js';
import { billingResource, makeClient, makeResource, makeUser } from './fixtures.js';
import { createEnv, type Env } from './harness.js';

describe('ID token', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });
  const verify = (jwt: string) =>
    jwtVerify(jwt, createLocalJWKSet(env.keys.jwks), {
      issuer: env.config.issuer,
      audience: 'web',
      currentDate: new Date(env.clock.nowSeconds() * 1000),
    });

  it('carries iss, sub, aud = client_id, exp, iat, auth_time, nonce, at_hash and sid', async () => {
    const accessToken = 'an-access-token';
    const jwt = await issueIdToken(
      {
        client: makeClient(),
        user: makeUser(),
        scopes: ['openid'],
        nonce: 'n-1',
        authTime: env.T0 - 5,
        sid: 's-1',
        accessToken,
      },
      env.context,
    );
    const { payload, protectedHeader } = await verify(jwt);
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT', kid: 'test-rs256' });
    const expectedAtHash = createHash('sha256')
      .update(accessToken)
      .digest()
      .subarray(0, 16)
      .toString('base64url');
    expect(payload).toEqual({
      iss: env.config.issuer,
      sub: 'u-alice',
      aud: 'web',
      iat: env.T0,
      exp: env.T0 + 3600,
      auth_time: env.T0 - 5,
      nonce: 'n-1',
      sid: 's-1',
      at_hash: expectedAtHash,
    });
  });

  it.each([
    [['openid'], {}],
    [['openid', 'profile'], { name: 'Alice Example' }],
    [['openid', 'email'], { email: 'alice@example.com', email_verified: true }],
    [
      ['openid', 'profile', 'email'],
      { name: 'Alice Example', email: 'alice@example.com', email_verified: true },
    ],
  ])('scopes %j release %j', async (scopes, claims) => {
    const { payload } = await verify(
      await issueIdToken({ client: makeClient(), user: makeUser(), scopes }, env.context),
    );
    const released = Object.fromEntries(
      Object.entries(payload).filter(([key]) => ['name', 'email', 'email_verified'].includes(key)),
    );
    expect(released).toEqual(claims);
    expect(payload.nonce).toBeUndefined();
    expect(payload.at_hash).toBeUndefined();
  });

  it('omits claims the user has no value for', async () => {
    const user = makeUser({ name: null, email: null });
    const { payload } = await verify(
      await issueIdToken({ client: makeClient(), user, scopes: ['openid', 'profile', 'email'] }, env.context),
    );
    expect(payload).not.toHaveProperty('name');
    expect(payload).not.toHaveProperty('email');
    expect(payload).not.toHaveProperty('email_verified');
  });

  it('signs with the client idTokenSigningAlg', async () => {
    const client = makeClient({ idTokenSigningAlg: 'ES256' });
    const jwt = await issueIdToken(
      { client, user: makeUser(), scopes: ['openid'], accessToken: 'x' },
      env.context,
    );
    const { payload, protectedHeader } = await verify(jwt);
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.at_hash).toBe(computeAtHash('x', 'ES256'));
  });

  it('computeAtHash: left half of SHA-256 (OIDC Core Appendix A.3 vector)', () => {
    // access_token and at_hash of OpenID Connect Core Appendix A.3.
    expect(computeAtHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y', 'RS256')).toBe(
      '77QmUPtjPfzWtF2AnpK9RQ',
    );
  });
});

describe('access tokens', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });
  const base = { client: makeClient(), sub: 'u-alice', grantId: 'g-1', user: makeUser(), authTime: 1 };

  it('JWT: typ at+jwt and the RFC 9068 claims, verified with the published keys', async () => {
    const issued = await issueAccessToken(
      {
        ...base,
        scopes: ['openid', 'email', 'offline_access', 'orders.read', 'billing.read'],
        resource: makeResource(),
      },
      { ...env.context, accessTokens: env.stores.accessTokens },
    );
    const { payload, protectedHeader } = await jwtVerify(issued.token, createLocalJWKSet(env.keys.jwks), {
      typ: 'at+jwt',
      issuer: env.config.issuer,
      audience: 'orders-api',
      currentDate: new Date(env.T0 * 1000),
    });
    expect(protectedHeader).toMatchObject({ typ: 'at+jwt', alg: 'RS256' });
    expect(payload).toEqual({
      iss: env.config.issuer,
      sub: 'u-alice',
      aud: 'orders-api',
      client_id: 'web',
      scope: 'openid email orders.read',
      iat: env.T0,
      exp: env.T0 + 300,
      jti: issued.jti,
      auth_time: 1,
      gid: 'g-1',
      email: 'alice@example.com',
    });
    expect(issued).toMatchObject({
      format: 'jwt',
      tokenType: 'Bearer',
      expiresIn: 300,
      audience: ['orders-api'],
    });
  });

  it('JWT: a user claim named like a registered claim cannot override it', async () => {
    const resource = makeResource({ claims: ['sub', 'email'] });
    const issued = await issueAccessToken(
      { ...base, sub: 'u-alice', scopes: ['orders.read'], resource },
      { ...env.context, accessTokens: env.stores.accessTokens },
    );
    expect(issued.token.split('.')).toHaveLength(3);
  });

  it('opaque: 256 random bits, only the hash is stored, with claims for introspection', async () => {
    const issued = await issueAccessToken(
      { ...base, scopes: ['openid', 'profile', 'billing.read'], resource: billingResource() },
      { ...env.context, accessTokens: env.stores.accessTokens },
    );
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await env.stores.accessTokens.findAccessToken(hashToken(issued.token));
    expect(row).toEqual({
      tokenHash: hashToken(issued.token),
      grantId: 'g-1',
      clientId: 'web',
      sub: 'u-alice',
      scopes: ['openid', 'profile', 'billing.read'],
      audience: ['billing-api'],
      issuedAt: env.T0,
      expiresAt: env.T0 + 600,
      revokedAt: null,
      dpopJkt: null,
      claims: { name: 'Alice Example' },
    });
    expect(await env.stores.accessTokens.findAccessToken(issued.token)).toBeNull();
  });
});

describe('refresh token policy', () => {
  it.each([
    [['authorization_code', 'refresh_token'], false, ['offline_access'], true],
    [['authorization_code', 'refresh_token'], false, ['openid'], false],
    [['authorization_code', 'refresh_token'], true, ['openid'], true],
    [['authorization_code'], true, ['offline_access'], false],
  ] as const)(
    'grant types %j, without-offline %s, scopes %j → %s',
    (grantTypes, without, scopes, expected) => {
      const client = makeClient({ grantTypes, refreshTokensWithoutOfflineAccess: without });
      expect(shouldIssueRefreshToken(client, scopes)).toBe(expected);
    },
  );

  it('expiry = min(absolute end, now + sliding)', () => {
    const client = makeClient({ refreshTokenAbsoluteTtl: 1000, refreshTokenSlidingTtl: 300 });
    expect(refreshTokenExpiry({ createdAt: 0 }, client, 100)).toBe(400);
    expect(refreshTokenExpiry({ createdAt: 0 }, client, 800)).toBe(1000);
  });
});
