import { CLAIMS_SUPPORTED, registeredGrantTypes } from '@oidc-orders/oauth-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { WEB_REDIRECT_URI } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

describe('GET /.well-known/openid-configuration', () => {
  it('builds every URL from ISSUER, even with a foreign Host header', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/.well-known/openid-configuration',
      headers: { host: 'evil.example.net', 'x-forwarded-host': 'evil.example.net' },
    });
    expect(response.statusCode).toBe(200);
    const metadata = response.json();
    expect(metadata.issuer).toBe(TEST_ISSUER);
    expect(metadata).toMatchObject({
      authorization_endpoint: `${TEST_ISSUER}/authorize`,
      token_endpoint: `${TEST_ISSUER}/token`,
      userinfo_endpoint: `${TEST_ISSUER}/userinfo`,
      jwks_uri: `${TEST_ISSUER}/jwks`,
      revocation_endpoint: `${TEST_ISSUER}/revoke`,
      introspection_endpoint: `${TEST_ISSUER}/introspect`,
      end_session_endpoint: `${TEST_ISSUER}/logout`,
    });
    expect(response.body).not.toContain('evil.example.net');
  });

  it('advertises what the server supports', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']),
    );
    expect(metadata.grant_types_supported).not.toContain('password');
    expect(metadata.grant_types_supported).not.toContain('implicit');
    expect(metadata.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
      'none',
    ]);
    expect(metadata.introspection_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic']),
    );
    expect(metadata.revocation_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic']),
    );
    expect(metadata.id_token_signing_alg_values_supported).toEqual(
      expect.arrayContaining(['RS256', 'ES256']),
    );
    expect(metadata.subject_types_supported).toEqual(['public']);
    expect(metadata.response_modes_supported).toEqual(expect.arrayContaining(['query']));
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['sub', 'iss', 'name', 'email']));
    // OIDC scopes plus the seeded resources' scopes.
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'profile', 'email', 'offline_access', 'orders.read', 'reports.read']),
    );
  });

  it('publishes the protocol constants oauth-core validates with, so the two cannot disagree', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();
    expect(metadata.grant_types_supported).toEqual(registeredGrantTypes());
    expect(metadata.prompt_values_supported).toEqual(['none', 'login', 'consent', 'select_account']);
    expect(metadata.response_modes_supported).toEqual([
      'query',
      'form_post',
      'jwt',
      'query.jwt',
      'form_post.jwt',
    ]);
    // JARM: the algorithms signed responses use, the same keys as ID tokens.
    expect(metadata.authorization_signing_alg_values_supported).toEqual(
      metadata.id_token_signing_alg_values_supported,
    );
    expect(metadata.claims_supported).toEqual([...CLAIMS_SUPPORTED]);
    // Every advertised prompt and response mode is accepted at /authorize (no invalid_request).
    for (const [name, values] of [
      ['prompt', metadata.prompt_values_supported as string[]],
      ['response_mode', metadata.response_modes_supported as string[]],
    ] as const) {
      for (const value of values) {
        const query = new URLSearchParams({
          response_type: 'code',
          client_id: 'web',
          redirect_uri: WEB_REDIRECT_URI,
          scope: 'openid',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
          [name]: value,
        });
        const response = await app.inject({ method: 'GET', url: `/authorize?${query}` });
        const answer = `${response.headers.location ?? ''} ${response.body}`;
        expect(answer, `${name}=${value}`).not.toContain('invalid_request');
        expect(answer, `${name}=${value}`).not.toContain('unsupported');
      }
    }
  });

  it('is cacheable', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('GET /jwks', () => {
  it('publishes one RS256 and one ES256 key, public members only, with cache headers', async () => {
    const response = await app.inject({ method: 'GET', url: '/jwks' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    const { keys } = response.json() as { keys: Array<Record<string, unknown>> };
    expect(keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const key of keys) {
      expect(key.use).toBe('sig');
      expect(typeof key.kid).toBe('string');
      // RFC 7518 §6.2.2 / §6.3.2: private members that must never be published.
      for (const privateMember of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) {
        expect(key).not.toHaveProperty(privateMember);
      }
    }
    const rsa = keys.find((key) => key.alg === 'RS256');
    expect(rsa).toMatchObject({ kty: 'RSA', e: 'AQAB' });
    expect(Object.keys(rsa ?? {}).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    const ec = keys.find((key) => key.alg === 'ES256');
    expect(ec).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(Object.keys(ec ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });
});
