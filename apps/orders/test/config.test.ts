import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const minimal = { DATABASE_URL: 'pglite://memory', API_KEY: 'k' };

function configErrorFor(environment: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig(minimal);

    expect(config).toMatchObject({
      nodeEnv: 'production',
      port: 3000,
      host: '0.0.0.0',
      logLevel: 'info',
      apiKeySource: 'environment',
      baseUrl: 'http://localhost:3000',
      oidc: {
        scopes: 'openid profile email offline_access orders.read',
        saveTokens: true,
        fetchUserinfo: false,
        roleClaim: 'role',
        httpTimeoutMs: 5000,
        refreshSkewSeconds: 60,
      },
      resourceId: 'orders-api',
      upstreamApiUrl: 'http://127.0.0.1:3000/orders',
      upstreamTimeoutMs: 5000,
      sessionTtlSeconds: 28_800,
      shutdownPauseMs: 10_000,
      shutdownTimeoutMs: 25_000,
      trustProxy: false,
      orderUnitPriceCents: 999n,
      orderTxTimeoutMs: 5000,
      databaseConnectTimeoutMs: 5000,
      allowedCorsOrigins: [],
    });
  });

  it('converts every variable it is given', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/orders',
      PORT: '8080',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      API_KEY: 'key',
      OIDC_ISSUER: 'http://localhost:4000/',
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: 'client-secret',
      BASE_URL: 'https://orders.example.com/',
      OIDC_SCOPES: 'openid',
      OIDC_SAVE_TOKENS: 'false',
      OIDC_FETCH_USERINFO: '1',
      OIDC_ROLE_CLAIM: 'roles',
      OIDC_HTTP_TIMEOUT_MS: '2500',
      TOKEN_REFRESH_SKEW_SECONDS: '30',
      SESSION_SECRET: 's'.repeat(32),
      SESSION_TTL_SECONDS: '600',
      UPSTREAM_TIMEOUT_MS: '1500',
      RESOURCE_ID: 'https://orders.example.com/api',
      RESOURCE_SECRET: 'resource-secret',
      UPSTREAM_API_URL: 'http://upstream.internal/orders',
      SHUTDOWN_PAUSE_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '5000',
      TRUST_PROXY: '2',
      ORDER_UNIT_PRICE: '12.5',
      ORDER_TX_TIMEOUT_MS: '250',
      ALLOWED_CORS_ORIGINS: 'http://localhost:5173, https://spa.example.com http://localhost:5173',
    });

    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      logLevel: 'debug',
      baseUrl: 'https://orders.example.com',
      oidc: {
        issuer: 'http://localhost:4000/',
        clientId: 'orders-web',
        clientSecret: 'client-secret',
        // openid and profile are always requested (the name claim comes with profile).
        scopes: 'openid profile',
        saveTokens: false,
        fetchUserinfo: true,
        roleClaim: 'roles',
        allowInsecureRequests: true,
        httpTimeoutMs: 2500,
        refreshSkewSeconds: 30,
      },
      sessionTtlSeconds: 600,
      upstreamTimeoutMs: 1500,
      sessionSecretSource: 'environment',
      resourceId: 'https://orders.example.com/api',
      resourceSecret: 'resource-secret',
      upstreamApiUrl: 'http://upstream.internal/orders',
      shutdownPauseMs: 0,
      shutdownTimeoutMs: 5000,
      trustProxy: 2,
      orderUnitPriceCents: 1250n,
      orderTxTimeoutMs: 250,
      allowedCorsOrigins: ['http://localhost:5173', 'https://spa.example.com'],
    });
  });

  it.each([
    ['missing DATABASE_URL', { API_KEY: 'k' }, 'DATABASE_URL'],
    ['empty DATABASE_URL', { ...minimal, DATABASE_URL: '' }, 'DATABASE_URL'],
    ['DATABASE_URL of another scheme', { ...minimal, DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ['pglite:// without a target', { ...minimal, DATABASE_URL: 'pglite://' }, 'DATABASE_URL'],
    ['non-numeric PORT', { ...minimal, PORT: 'http' }, 'PORT'],
    ['PORT above 65535', { ...minimal, PORT: '65536' }, 'PORT'],
    ['negative PORT', { ...minimal, PORT: '-1' }, 'PORT'],
    ['unknown LOG_LEVEL', { ...minimal, LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
    ['missing API_KEY in production', { DATABASE_URL: 'pglite://memory', NODE_ENV: 'production' }, 'API_KEY'],
    ['missing API_KEY with NODE_ENV unset', { DATABASE_URL: 'pglite://memory' }, 'API_KEY'],
    ['relative BASE_URL', { ...minimal, BASE_URL: '/orders' }, 'BASE_URL'],
    ['non-http OIDC_ISSUER', { ...minimal, OIDC_ISSUER: 'ftp://issuer' }, 'OIDC_ISSUER'],
    ['non-boolean OIDC_SAVE_TOKENS', { ...minimal, OIDC_SAVE_TOKENS: 'yes' }, 'OIDC_SAVE_TOKENS'],
    ['short SESSION_SECRET', { ...minimal, SESSION_SECRET: 'short' }, 'SESSION_SECRET'],
    ['ORDER_UNIT_PRICE with 3 decimals', { ...minimal, ORDER_UNIT_PRICE: '9.999' }, 'ORDER_UNIT_PRICE'],
    ['ORDER_UNIT_PRICE not a number', { ...minimal, ORDER_UNIT_PRICE: 'cheap' }, 'ORDER_UNIT_PRICE'],
    [
      'ORDER_UNIT_PRICE beyond numeric(12,2)',
      { ...minimal, ORDER_UNIT_PRICE: '10000000000' },
      'ORDER_UNIT_PRICE',
    ],
    [
      'a CORS origin with a path',
      { ...minimal, ALLOWED_CORS_ORIGINS: 'http://localhost:5173/' },
      'ALLOWED_CORS_ORIGINS',
    ],
    ['a CORS origin that is a wildcard', { ...minimal, ALLOWED_CORS_ORIGINS: '*' }, 'ALLOWED_CORS_ORIGINS'],
    [
      'a CORS origin with a default port',
      { ...minimal, ALLOWED_CORS_ORIGINS: 'https://a.test:443' },
      'ALLOWED_CORS_ORIGINS',
    ],
    ['ORDER_TX_TIMEOUT_MS of 0', { ...minimal, ORDER_TX_TIMEOUT_MS: '0' }, 'ORDER_TX_TIMEOUT_MS'],
    ['pause not below the hard deadline', { ...minimal, SHUTDOWN_PAUSE_MS: '30000' }, 'SHUTDOWN_PAUSE_MS'],
    [
      'OIDC_ISSUER without OIDC_CLIENT_ID',
      { ...minimal, OIDC_ISSUER: 'https://id.example.com', SESSION_SECRET: 's'.repeat(32) },
      'OIDC_CLIENT_ID',
    ],
    [
      'OIDC_ISSUER without SESSION_SECRET outside development',
      { ...minimal, OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'orders-web' },
      'SESSION_SECRET',
    ],
    [
      'an http OIDC_ISSUER on a network host in production',
      {
        ...minimal,
        OIDC_ISSUER: 'http://id.example.com',
        OIDC_CLIENT_ID: 'orders-web',
        SESSION_SECRET: 's'.repeat(32),
      },
      'OIDC_ISSUER',
    ],
    ['SESSION_TTL_SECONDS of 0', { ...minimal, SESSION_TTL_SECONDS: '0' }, 'SESSION_TTL_SECONDS'],
    ['OIDC_ROLE_CLAIM with a space', { ...minimal, OIDC_ROLE_CLAIM: 'my role' }, 'OIDC_ROLE_CLAIM'],
    ['UPSTREAM_TIMEOUT_MS not a number', { ...minimal, UPSTREAM_TIMEOUT_MS: 'soon' }, 'UPSTREAM_TIMEOUT_MS'],
  ])('rejects %s with a ConfigError naming the variable', (_name, environment, variable) => {
    const error = configErrorFor(environment);

    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable} `)).toBe(true);
    expect(error.message).not.toContain('\n');
  });

  it('never echoes the rejected value (it may be a secret)', () => {
    const error = configErrorFor({ ...minimal, DATABASE_URL: 'mysql://user:hunter2@db/x' });

    expect(error.message).not.toContain('hunter2');
  });

  it('generates a dev-only API key and session secret only with NODE_ENV=development', () => {
    const config = loadConfig(
      { DATABASE_URL: 'pglite://memory', NODE_ENV: 'development' },
      { generateSecret: () => 'generated-secret' },
    );

    expect(config.apiKey).toBe('generated-secret');
    expect(config.apiKeySource).toBe('generated-dev-only');
    expect(config.sessionSecretSource).toBe('generated-dev-only');
  });

  it('generates real random keys by default', () => {
    const development = { DATABASE_URL: 'pglite://memory', NODE_ENV: 'development' };

    const first = loadConfig(development).apiKey;
    const second = loadConfig(development).apiKey;

    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(first).not.toBe(second);
  });

  it('leaves SESSION_SECRET unset outside development instead of inventing one', () => {
    const config = loadConfig(minimal);

    expect(config.sessionSecret).toBeUndefined();
    expect(config.sessionSecretSource).toBe('unset');
  });

  it('requests offline_access and orders.read by default only when tokens are kept', () => {
    expect(loadConfig(minimal).oidc.scopes).toBe('openid profile email offline_access orders.read');
    expect(loadConfig({ ...minimal, OIDC_SAVE_TOKENS: 'false' }).oidc.scopes).toBe('openid profile email');
  });

  it('always adds openid and profile to OIDC_SCOPES, without duplicates', () => {
    expect(loadConfig({ ...minimal, OIDC_SCOPES: 'email  openid orders.read' }).oidc.scopes).toBe(
      'openid profile email orders.read',
    );
  });

  it('accepts an http issuer only on a loopback address or in development/test', () => {
    const oidc = { OIDC_CLIENT_ID: 'orders-web', SESSION_SECRET: 's'.repeat(32) };

    expect(
      loadConfig({ ...minimal, ...oidc, OIDC_ISSUER: 'http://127.0.0.1:4000' }).oidc.allowInsecureRequests,
    ).toBe(true);
    expect(
      loadConfig({ ...minimal, ...oidc, OIDC_ISSUER: 'http://localhost:4000' }).oidc.allowInsecureRequests,
    ).toBe(true);
    expect(
      loadConfig({ ...minimal, ...oidc, NODE_ENV: 'test', OIDC_ISSUER: 'http://auth:4000' }).oidc
        .allowInsecureRequests,
    ).toBe(true);
    expect(
      loadConfig({ ...minimal, ...oidc, OIDC_ISSUER: 'https://auth.example.com' }).oidc.allowInsecureRequests,
    ).toBe(false);
  });

  it('needs no SESSION_SECRET in development, where one is generated for the process', () => {
    const config = loadConfig(
      {
        DATABASE_URL: 'pglite://memory',
        NODE_ENV: 'development',
        OIDC_ISSUER: 'http://localhost:4000',
        OIDC_CLIENT_ID: 'orders-web',
      },
      { generateSecret: () => 'g'.repeat(43) },
    );

    expect(config.sessionSecret).toBe('g'.repeat(43));
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ ...minimal, PORT: '' }).port).toBe(3000);
  });

  it.each([
    ['true', true],
    ['false', false],
    ['1', 1],
    // The auth server's vocabulary too (@oidc-orders/service-kit): a list of addresses/CIDRs.
    ['10.0.0.0/8,127.0.0.1', ['10.0.0.0/8', '127.0.0.1']],
  ])('reads TRUST_PROXY=%s', (value, expected) => {
    expect(loadConfig({ ...minimal, TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it('rejects a TRUST_PROXY that is no boolean, hop count or address list, naming the variable', () => {
    expect(() => loadConfig({ ...minimal, TRUST_PROXY: 'yes please' })).toThrow(/TRUST_PROXY/);
  });
});

describe('relative paths', () => {
  it('resolves pglite://<relative dir> against the directory pnpm was started from (INIT_CWD)', () => {
    const config = loadConfig({
      NODE_ENV: 'development',
      DATABASE_URL: 'pglite://.data/orders',
      INIT_CWD: '/home/someone/project',
    });
    expect(config.databaseUrl).toBe('pglite:///home/someone/project/.data/orders');
    expect(loadConfig({ NODE_ENV: 'development', DATABASE_URL: 'pglite://memory' }).databaseUrl).toBe(
      'pglite://memory',
    );
  });
});

describe('secrets from files (docker-compose secrets, docs/configuration.md)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'orders-config-secrets-'));
  const secretFile = (name: string, content: string) => {
    const path = join(directory, name);
    writeFileSync(path, content);
    return path;
  };

  it('reads every secret setting from the file its _FILE variable names', () => {
    const config = loadConfig({
      DATABASE_URL_FILE: secretFile('database-url', 'pglite://memory\n'),
      API_KEY_FILE: secretFile('api-key', 'api-key-from-file\n'),
      SESSION_SECRET_FILE: secretFile('session', `${'s'.repeat(40)}\n`),
      OIDC_ISSUER: 'https://auth.example.test',
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET_FILE: secretFile('client-secret', 'client-secret-from-file'),
      RESOURCE_SECRET_FILE: secretFile('resource-secret', 'resource-secret-from-file\n'),
    });
    expect(config.apiKey).toBe('api-key-from-file');
    expect(config.apiKeySource).toBe('environment');
    expect(config.oidc?.clientSecret).toBe('client-secret-from-file');
    expect(config.resourceSecret).toBe('resource-secret-from-file');
    expect(config.databaseUrl).toBe('pglite://memory');
  });

  it('refuses a setting given both ways, and an empty file, naming the variable', () => {
    const both = configErrorFor({ ...minimal, API_KEY_FILE: secretFile('k', 'other') });
    expect(both.variable).toBe('API_KEY');
    expect(both.message).toBe('API_KEY and API_KEY_FILE are both set: keep one');
    const empty = secretFile('empty', '\n');
    const emptyError = configErrorFor({ ...minimal, SESSION_SECRET_FILE: empty });
    expect(emptyError.message).toBe(`SESSION_SECRET_FILE names an empty file: ${empty}`);
  });
});
