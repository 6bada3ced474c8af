import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const base = { NODE_ENV: 'development', DATABASE_URL: 'pglite://memory' };
const validKey = Buffer.alloc(32, 1).toString('base64url');

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig(base);
    expect(config.port).toBe(4000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.issuer).toBe('http://localhost:4000');
    expect(config.logLevel).toBe('info');
    expect(config.trustProxy).toBe(false);
    expect(config.seedFile).toBeUndefined();
    expect(config.database).toEqual({ driver: 'pglite', dataDir: undefined });
    expect(config.protocol).toEqual({
      issuer: 'http://localhost:4000',
      authorizationCodeTtl: 60,
      idTokenTtl: 3600,
      defaultAccessTokenTtl: 300,
    });
  });

  it('parses every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/auth',
      PORT: '8080',
      HOST: '127.0.0.1',
      ISSUER: 'https://id.example.com',
      SEED_FILE: '/etc/seed.json',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: 'true',
      KEY_ENCRYPTION_KEY: validKey,
      NODE_ENV: 'production',
      SHUTDOWN_PAUSE_MS: '2500',
      ID_TOKEN_TTL: '600',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      issuer: 'https://id.example.com',
      seedFile: '/etc/seed.json',
      logLevel: 'debug',
      trustProxy: true,
      nodeEnv: 'production',
      shutdownPauseMs: 2500,
      keyEncryptionKeyIsDevelopmentOnly: false,
      database: { driver: 'pg', connectionString: 'postgres://u@db:5432/auth' },
    });
    expect(config.protocol.idTokenTtl).toBe(600);
    expect(Buffer.from(config.keyEncryptionKey).equals(Buffer.alloc(32, 1))).toBe(true);
  });

  it('gives each issuer its own default dev mailbox folder, so two instances started from one folder keep their mails apart', () => {
    const mailboxOf = (env: Record<string, string>) => {
      const { mail } = loadConfig({ ...base, ...env });
      return mail?.transport === 'dev-mailbox' ? mail.directory : undefined;
    };
    const first = mailboxOf({ INIT_CWD: '/repo' });
    const second = mailboxOf({ INIT_CWD: '/repo', PORT: '4100', ISSUER: 'http://127.0.0.1:4100' });
    expect(first).toBe('/repo/.data/mail-localhost-4000');
    expect(second).toBe('/repo/.data/mail-127.0.0.1-4100');
    // pnpm dev names its own (MAIL_DEV_DIR=.data/mail), which neither default is.
    expect(mailboxOf({ INIT_CWD: '/repo', MAIL_DEV_DIR: '/repo/.data/mail' })).toBe('/repo/.data/mail');
  });

  it('defaults the shutdown pause to 10 s in production and lower in development', () => {
    expect(
      loadConfig({ ...base, NODE_ENV: 'production', KEY_ENCRYPTION_KEY: validKey }).shutdownPauseMs,
    ).toBe(10_000);
    expect(loadConfig({ ...base, NODE_ENV: 'development' }).shutdownPauseMs).toBeLessThan(10_000);
  });

  it('reads TRUST_PROXY as a boolean, a hop count or a list of addresses', () => {
    expect(loadConfig({ ...base, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: '' }).trustProxy).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    // "1" is a hop count, as in apps/orders, never "every hop".
    expect(loadConfig({ ...base, TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ ...base, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
  });

  it('uses a development-only key outside production when KEY_ENCRYPTION_KEY is missing', () => {
    const config = loadConfig({ ...base, NODE_ENV: 'development' });
    expect(config.keyEncryptionKeyIsDevelopmentOnly).toBe(true);
    expect(config.keyEncryptionKey).toHaveLength(32);
  });

  it.each([
    [{}, /^DATABASE_URL is required$/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL is invalid/],
    [{ ...base, PORT: 'http' }, /^PORT is invalid/],
    [{ ...base, PORT: '70000' }, /^PORT is invalid/],
    [
      { ...base, LOG_LEVEL: 'loud' },
      /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)$/,
    ],
    [{ ...base, ISSUER: 'not a url' }, /^ISSUER is invalid/],
    [{ ...base, ISSUER: 'https://id.example.com/' }, /^ISSUER is invalid/],
    [{ ...base, ISSUER: 'https://id.example.com?x=1' }, /^ISSUER is invalid/],
    [{ ...base, NODE_ENV: 'staging' }, /^NODE_ENV must be one of development, production, test/],
    [{ ...base, NODE_ENV: 'production' }, /^KEY_ENCRYPTION_KEY is required when NODE_ENV=production/],
    [{ ...base, KEY_ENCRYPTION_KEY: 'c2hvcnQ' }, /^KEY_ENCRYPTION_KEY is invalid: decodes to 5 bytes/],
    [{ ...base, KEY_ENCRYPTION_KEY: 'not base64url!' }, /^KEY_ENCRYPTION_KEY is invalid/],
    [{ ...base, TRUST_PROXY: 'everyone' }, /^TRUST_PROXY is invalid/],
    [{ ...base, SHUTDOWN_PAUSE_MS: '-1' }, /^SHUTDOWN_PAUSE_MS is invalid/],
  ])('rejects %o with one line naming the variable', (env, message) => {
    const error = configError(env as Record<string, string>);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('\n');
  });

  it('never echoes the key or the database URL in an error', () => {
    const secretish = `${'A'.repeat(40)}`;
    expect(configError({ ...base, KEY_ENCRYPTION_KEY: secretish }).message).not.toContain(secretish);
  });
});

describe('secrets from files (KEY_ENCRYPTION_KEY_FILE, DATABASE_URL_FILE)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'auth-config-secrets-'));
  const secretFile = (name: string, content: string) => {
    const path = join(directory, name);
    writeFileSync(path, content);
    return path;
  };

  it('reads each secret setting from the file its _FILE variable names', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      ISSUER: 'https://auth.example.test',
      DATABASE_URL_FILE: secretFile('database-url', 'postgres://auth:pw@db:5432/auth\n'),
      KEY_ENCRYPTION_KEY_FILE: secretFile('kek', `${validKey}\n`),
    });
    expect(config.database).toEqual({ driver: 'pg', connectionString: 'postgres://auth:pw@db:5432/auth' });
    expect(Buffer.from(config.keyEncryptionKey).equals(Buffer.alloc(32, 1))).toBe(true);
    expect(config.keyEncryptionKeyIsDevelopmentOnly).toBe(false);
  });

  it('refuses a setting given both ways, and a missing file, in one line naming the variable', () => {
    expect(
      configError({
        ...base,
        KEY_ENCRYPTION_KEY: validKey,
        KEY_ENCRYPTION_KEY_FILE: secretFile('k2', validKey),
      }).message,
    ).toBe('KEY_ENCRYPTION_KEY and KEY_ENCRYPTION_KEY_FILE are both set: keep one');
    const missing = join(directory, 'absent');
    expect(configError({ ...base, KEY_ENCRYPTION_KEY_FILE: missing }).message).toBe(
      `KEY_ENCRYPTION_KEY_FILE names a file that cannot be read: ${missing} (ENOENT)`,
    );
  });
});
