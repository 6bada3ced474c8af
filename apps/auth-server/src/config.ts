import { isAbsolute, resolve } from 'node:path';
import type { ProtocolConfig } from '@oidc-orders/oauth-core';
import {
  type DatabaseLocation,
  parseDatabaseUrl,
  parseTrustProxy as parseKitTrustProxy,
  resolveSecretFiles,
  SecretFileError,
  type TrustProxy,
} from '@oidc-orders/service-kit';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { type DirectoryConfig, parseDirectoryConfig } from './directory/config.js';

/**
 * The environment, parsed once (src/server.ts) into a typed configuration. `buildApp` receives the
 * result and never reads `process.env` itself, so tests build apps from plain objects.
 */

const NODE_ENVS = ['development', 'production', 'test'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const Seconds = (fallback: number) => Type.Integer({ minimum: 1, maximum: 31_536_000, default: fallback });

/** Environment variables this server reads, with their defaults (README "Configuration"). */
export const EnvironmentSchema = Type.Object({
  // Unset means production, the safe choice (as in the orders app); `pnpm dev` sets development.
  NODE_ENV: Type.Union(
    NODE_ENVS.map((value) => Type.Literal(value)),
    { default: 'production' },
  ),
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 4000 }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0' }),
  ISSUER: Type.String({ minLength: 1, default: 'http://localhost:4000' }),
  DATABASE_URL: Type.String({ minLength: 1 }),
  SEED_FILE: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((value) => Type.Literal(value)),
    { default: 'info' },
  ),
  TRUST_PROXY: Type.Optional(Type.String()),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  KEY_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Readiness answers 503 this long after SIGTERM before the server stops accepting connections. */
  SHUTDOWN_PAUSE_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 20_000 })),
  AUTHORIZATION_CODE_TTL: Seconds(60),
  ID_TOKEN_TTL: Seconds(3600),
  /** Default for resources without `access_token_ttl`, and for tokens that name no resource. */
  ACCESS_TOKEN_TTL: Seconds(300),
  /** Defaults for clients without `refresh_token_absolute_ttl` / `refresh_token_sliding_ttl`. */
  REFRESH_TOKEN_ABSOLUTE_TTL: Seconds(30 * 24 * 3600),
  REFRESH_TOKEN_SLIDING_TTL: Seconds(14 * 24 * 3600),
  /** RFC 8628 §3.2 `expires_in` of device codes. */
  DEVICE_CODE_TTL: Seconds(600),
  /** RFC 8628 §3.2 `interval`: minimum seconds between polls (slow_down adds 5). */
  DEVICE_CODE_POLL_INTERVAL: Type.Integer({ minimum: 1, maximum: 60, default: 5 }),
  /** User-code entries per minute and client IP on the verification page (README "Device flow"). */
  DEVICE_USER_CODE_ATTEMPTS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  /** How long discovery and JWKS responses may be cached by clients (Cache-Control max-age). */
  METADATA_MAX_AGE: Type.Integer({ minimum: 0, maximum: 86_400, default: 300 }),
  /** Days stored audit events are kept (docs/configuration.md); older ones are deleted hourly. */
  AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 90 }),
  /** Failed sign-ins per username within the window before it is locked until the window ends (0 = off). */
  LOGIN_MAX_FAILURES_PER_USERNAME: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 5 }),
  /** Failed sign-ins per client IP within the window before that IP is refused until it ends (0 = off). */
  LOGIN_MAX_FAILURES_PER_IP: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 50 }),
  /** The login failure window, seconds (a fixed window from the first failure). */
  LOGIN_FAILURE_WINDOW_SECONDS: Seconds(900),
  /**
   * Token requests per minute and client_id (0 = off, the default; docs/security-and-operations.md
   * "Rate limits").
   */
  TOKEN_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 100_000_000, default: 0 }),
  /** RFC 7591 registrations per minute and IP (seed `client_registration`); 0 = off. */
  REGISTRATION_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 100_000, default: 10 }),
  /** Where the token endpoint's rate-limit counters live: per instance, or shared by every instance. */
  RATE_LIMIT_STORE: Type.Union([Type.Literal('memory'), Type.Literal('database')], { default: 'memory' }),
  /** Kerberos (README "Kerberos"): the keytab; MIT GSSAPI reads this same variable itself. */
  KRB5_KTNAME: Type.Optional(Type.String({ minLength: 1 })),
  /** Pins the accepted service principal (`HTTP/host@REALM`); default: any key in the keytab. */
  KERBEROS_SERVICE_PRINCIPAL: Type.Optional(Type.String({ pattern: '^[^/@\\s]+/[^/@\\s]+(@[^@\\s]+)?$' })),
  /** Realm rule, off by default: `name@<this realm>` signs in the user whose username is `name`. */
  KERBEROS_USERNAME_REALM: Type.Optional(Type.String({ pattern: '^[^@\\s]+$' })),
  /** Mail (README "Email"): `smtp://[user:password@]host:port` (STARTTLS when offered) or `smtps://`. */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  /** A PEM file of the CA that signed the SMTP server's certificate (a private CA). */
  SMTP_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** The `From` of every mail; default `no-reply@<the issuer's host>`. */
  MAIL_FROM: Type.Optional(Type.String({ minLength: 3 })),
  /** Outside production without SMTP_URL: the folder of the dev mailbox (default `.data/mail`). */
  MAIL_DEV_DIR: Type.Optional(Type.String({ minLength: 1 })),
});
export type Environment = Static<typeof EnvironmentSchema>;

export type NodeEnv = (typeof NODE_ENVS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type { TrustProxy };

export interface LifetimeDefaults {
  accessTokenTtl: number;
  refreshTokenAbsoluteTtl: number;
  refreshTokenSlidingTtl: number;
}

/** RFC 8628 device flow settings (seconds; attempts per minute per client IP). */
export interface DeviceFlowConfig {
  deviceCodeTtl: number;
  pollInterval: number;
  userCodeAttemptsPerMinute: number;
}

/**
 * docs/security-and-operations.md "Rate limits": limits on guessing passwords and on token request
 * floods.
 */
export interface RateLimitConfig {
  /** 0 = no per-username limit. */
  loginMaxFailuresPerUsername: number;
  /** 0 = no per-IP limit. */
  loginMaxFailuresPerIp: number;
  loginFailureWindowSeconds: number;
  /** 0 = the token endpoint is not rate limited. */
  tokenRequestsPerMinute: number;
  /** 0 = the registration endpoint (RFC 7591) is not rate limited per IP. */
  registrationsPerMinute: number;
  /** `memory`: each instance counts alone; `database`: the `rate_limit_counters` table, shared. */
  store: 'memory' | 'database';
}

/** Kerberos single sign-on (SPNEGO, RFC 4559); `null` in AppConfig when KRB5_KTNAME is unset. */
export interface KerberosConfig {
  /** KRB5_KTNAME as given (`/path` or `FILE:/path`). */
  keytab: string;
  /** `HTTP/host@REALM` (or `HTTP/host`): accept tickets for this principal only. */
  servicePrincipal: string | null;
  /** The realm whose principals map to usernames (`name@REALM` → user `name`), or `null` (off). */
  usernameRealm: string | null;
}

/**
 * Where mails go (README "Email"): an SMTP server, or, outside production without SMTP_URL, the
 * dev mailbox (one file per mail that a person reads at /dev/mailbox). `null` in AppConfig when
 * neither: no mail is sent and the login page shows no forgot-password link.
 */
export type MailConfig =
  | { transport: 'smtp'; url: string; caFile: string | undefined; from: string }
  | { transport: 'dev-mailbox'; directory: string; from: string };

export interface AppConfig {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  /** Exactly as it appears in `iss` and discovery. */
  issuer: string;
  database: DatabaseLocation;
  seedFile: string | undefined;
  logLevel: LogLevel;
  trustProxy: TrustProxy;
  /** GET /metrics from other than loopback needs `Authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: string | undefined;
  /** 32 bytes; encrypts private signing keys at rest and keys the client-secret hasher (via HKDF). */
  keyEncryptionKey: Uint8Array;
  /** `true` when no KEY_ENCRYPTION_KEY was given and the fixed development key is in use. */
  keyEncryptionKeyIsDevelopmentOnly: boolean;
  shutdownPauseMs: number;
  metadataMaxAgeSeconds: number;
  /** Stored audit events older than this many days are deleted. */
  auditRetentionDays: number;
  protocol: ProtocolConfig;
  lifetimes: LifetimeDefaults;
  device: DeviceFlowConfig;
  rateLimits: RateLimitConfig;
  kerberos: KerberosConfig | null;
  mail: MailConfig | null;
  /** Directory users (README "Directory users"); null when LDAP_URL is not set. */
  directory: DirectoryConfig | null;
  /** One-line notes about surprising but valid settings, logged as warnings at start. */
  warnings: readonly string[];
}

/** A configuration problem, phrased as one line naming the variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Outside production a missing KEY_ENCRYPTION_KEY falls back to this fixed, public value, so a
 * persistent development database (pglite://.data/…) still decrypts its keys after a restart.
 * It protects nothing; start-up logs a warning saying so.
 */
const DEVELOPMENT_KEY_ENCRYPTION_KEY = new Uint8Array(
  Buffer.from('auth-server development-only key!', 'utf8').subarray(0, 32),
);

const PRODUCTION_SHUTDOWN_PAUSE_MS = 10_000;
const DEVELOPMENT_SHUTDOWN_PAUSE_MS = 500;

/**
 * The settings that may come from a file instead (`KEY_ENCRYPTION_KEY_FILE=/run/secrets/…`), so
 * that docker-compose secrets keep them out of `docker inspect` (docs/configuration.md "Secrets
 * from files").
 */
export const SECRET_FILE_SETTINGS = [
  'KEY_ENCRYPTION_KEY',
  'DATABASE_URL',
  'METRICS_TOKEN',
  'SMTP_URL',
  'LDAP_BIND_PASSWORD',
] as const;

function withSecretFiles(env: Readonly<Record<string, string | undefined>>) {
  try {
    return resolveSecretFiles(env, SECRET_FILE_SETTINGS);
  } catch (error) {
    if (error instanceof SecretFileError) throw new ConfigError(error.message);
    throw error;
  }
}

/** Parses the environment; throws `ConfigError` with a one-line message naming the variable. */
export function loadConfig(environmentWithFiles: Readonly<Record<string, string | undefined>>): AppConfig {
  const env = withSecretFiles(environmentWithFiles);
  const raw = pickKnownVariables(env);
  const parsed = Value.Default(EnvironmentSchema, Value.Convert(EnvironmentSchema, { ...raw }));
  const firstError = Value.Errors(EnvironmentSchema, parsed).First();
  if (firstError) {
    const variable = firstError.path.replace(/^\//, '') || 'environment';
    const value = raw[variable];
    throw new ConfigError(
      value === undefined
        ? `${variable} is required`
        : `${variable} ${expectation(variable, firstError.message)}${describeOffendingValue(variable, value)}`,
    );
  }
  const environment = parsed as Environment;

  const baseDirectory = startDirectory(env);
  const database = resolveDatabaseDirectory(parseDatabaseUrl(environment.DATABASE_URL), baseDirectory);
  if (!database) {
    throw new ConfigError(
      'DATABASE_URL is invalid: expected postgres://…, pglite://<dir> or pglite://memory',
    );
  }

  const issuer = parseIssuer(environment.ISSUER);
  const keyEncryption = resolveKeyEncryptionKey(environment);

  return {
    nodeEnv: environment.NODE_ENV,
    port: environment.PORT,
    host: environment.HOST,
    issuer,
    database,
    seedFile: environment.SEED_FILE === undefined ? undefined : resolve(baseDirectory, environment.SEED_FILE),
    logLevel: environment.LOG_LEVEL,
    trustProxy: parseTrustProxy(environment.TRUST_PROXY),
    metricsToken: environment.METRICS_TOKEN,
    keyEncryptionKey: keyEncryption.key,
    keyEncryptionKeyIsDevelopmentOnly: keyEncryption.developmentOnly,
    shutdownPauseMs:
      environment.SHUTDOWN_PAUSE_MS ??
      (environment.NODE_ENV === 'production' ? PRODUCTION_SHUTDOWN_PAUSE_MS : DEVELOPMENT_SHUTDOWN_PAUSE_MS),
    metadataMaxAgeSeconds: environment.METADATA_MAX_AGE,
    auditRetentionDays: environment.AUDIT_RETENTION_DAYS,
    protocol: {
      issuer,
      authorizationCodeTtl: environment.AUTHORIZATION_CODE_TTL,
      idTokenTtl: environment.ID_TOKEN_TTL,
      defaultAccessTokenTtl: environment.ACCESS_TOKEN_TTL,
    },
    lifetimes: {
      accessTokenTtl: environment.ACCESS_TOKEN_TTL,
      refreshTokenAbsoluteTtl: environment.REFRESH_TOKEN_ABSOLUTE_TTL,
      refreshTokenSlidingTtl: environment.REFRESH_TOKEN_SLIDING_TTL,
    },
    device: {
      deviceCodeTtl: environment.DEVICE_CODE_TTL,
      pollInterval: environment.DEVICE_CODE_POLL_INTERVAL,
      userCodeAttemptsPerMinute: environment.DEVICE_USER_CODE_ATTEMPTS_PER_MINUTE,
    },
    warnings: configurationWarnings(raw, environment.PORT, issuer),
    rateLimits: {
      loginMaxFailuresPerUsername: environment.LOGIN_MAX_FAILURES_PER_USERNAME,
      loginMaxFailuresPerIp: environment.LOGIN_MAX_FAILURES_PER_IP,
      loginFailureWindowSeconds: environment.LOGIN_FAILURE_WINDOW_SECONDS,
      tokenRequestsPerMinute: environment.TOKEN_RATE_LIMIT_PER_MINUTE,
      registrationsPerMinute: environment.REGISTRATION_RATE_LIMIT_PER_MINUTE,
      store: environment.RATE_LIMIT_STORE,
    },
    kerberos: kerberosConfigOf(environment),
    mail: mailConfigOf(environment, issuer, baseDirectory),
    directory: directoryConfigOf(env, baseDirectory),
  };
}

/** Every directory mistake at once, one line each (the directory has many related settings). */
function directoryConfigOf(
  env: Readonly<Record<string, string | undefined>>,
  baseDirectory: string,
): DirectoryConfig | null {
  const { config, problems } = parseDirectoryConfig(env, baseDirectory);
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return config;
}

/**
 * SMTP when SMTP_URL is set; otherwise the dev mailbox outside production (under
 * `.data/mail-<issuer host>-<port>` of the start directory unless MAIL_DEV_DIR names another; tests
 * set MAIL_DEV_DIR to opt in), and no mail at all in production. The folder is the issuer's own, so
 * a second instance started from the same folder (an upstream provider beside `pnpm dev`, whose
 * mailbox is `.data/mail`) never lists the other's mails.
 */
function mailConfigOf(environment: Environment, issuer: string, baseDirectory: string): MailConfig | null {
  const from = environment.MAIL_FROM ?? `no-reply@${new URL(issuer).hostname}`;
  if (environment.SMTP_URL !== undefined) {
    if (!URL.canParse(environment.SMTP_URL)) throw new ConfigError('SMTP_URL is invalid: not a URL');
    const caFile = environment.SMTP_CA_FILE && resolve(baseDirectory, environment.SMTP_CA_FILE);
    return { transport: 'smtp', url: environment.SMTP_URL, caFile, from };
  }
  if (environment.SMTP_CA_FILE !== undefined)
    throw new ConfigError('SMTP_URL is required when SMTP_CA_FILE is set');
  if (environment.NODE_ENV === 'production') return null;
  if (environment.MAIL_DEV_DIR === undefined && environment.NODE_ENV !== 'development') return null;
  const directory = resolve(baseDirectory, environment.MAIL_DEV_DIR ?? defaultDevMailboxFolder(issuer));
  return { transport: 'dev-mailbox', directory, from };
}

function defaultDevMailboxFolder(issuer: string): string {
  const { hostname, port, protocol } = new URL(issuer);
  return `.data/mail-${hostname}-${port || (protocol === 'https:' ? '443' : '80')}`;
}

function kerberosConfigOf(environment: Environment): KerberosConfig | null {
  if (environment.KRB5_KTNAME === undefined) {
    if (
      environment.KERBEROS_SERVICE_PRINCIPAL !== undefined ||
      environment.KERBEROS_USERNAME_REALM !== undefined
    ) {
      throw new ConfigError(
        'KRB5_KTNAME is required when KERBEROS_SERVICE_PRINCIPAL or KERBEROS_USERNAME_REALM is set',
      );
    }
    return null;
  }
  return {
    keytab: environment.KRB5_KTNAME,
    servicePrincipal: environment.KERBEROS_SERVICE_PRINCIPAL ?? null,
    usernameRealm: environment.KERBEROS_USERNAME_REALM ?? null,
  };
}

/**
 * What a variable must be, in words: for a choice, the list of allowed values (TypeBox's own
 * message, "expected union value", names nothing a person can act on).
 */
function expectation(variable: string, schemaMessage: string): string {
  const schema = (EnvironmentSchema.properties as Record<string, TSchema>)[variable];
  const choices = schema?.anyOf
    ?.map((option: TSchema) => option.const)
    .filter((value: unknown) => value !== undefined);
  if (choices && choices.length > 0) return `must be one of ${choices.join(', ')}`;
  return `is invalid: ${schemaMessage.toLowerCase()}`;
}

/**
 * Relative paths (SEED_FILE, DATABASE_URL=pglite://<dir>) are the user's: `pnpm --filter … start`
 * runs the app in apps/auth-server, so they are resolved against the directory pnpm was started
 * from (INIT_CWD, set by pnpm and npm), not the package's.
 */
function startDirectory(env: Readonly<Record<string, string | undefined>>): string {
  return env.INIT_CWD && isAbsolute(env.INIT_CWD) ? env.INIT_CWD : process.cwd();
}

function resolveDatabaseDirectory(
  location: DatabaseLocation | undefined,
  baseDirectory: string,
): DatabaseLocation | undefined {
  if (location?.driver !== 'pglite' || location.dataDir === undefined) return location;
  return { driver: 'pglite', dataDir: resolve(baseDirectory, location.dataDir) };
}

/**
 * Non-fatal configuration surprises, one line each, logged at start (src/server.ts).
 * PORT without ISSUER: discovery would name an address this server does not listen on.
 */
function configurationWarnings(raw: Record<string, string>, port: number, issuer: string): string[] {
  const warnings: string[] = [];
  if (
    raw.ISSUER === undefined &&
    raw.PORT !== undefined &&
    String(port) !== new URL(issuer).port &&
    port !== 0
  ) {
    warnings.push(
      `PORT is ${port} but ISSUER is not set, so discovery names ${issuer}: set ISSUER=http://localhost:${port} (or the public URL)`,
    );
  }
  return warnings;
}

function pickKnownVariables(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of Object.keys(EnvironmentSchema.properties)) {
    const value = env[name];
    // An empty variable (`PORT=`) means "not set", as in most shells' `${VAR:-default}`.
    if (value !== undefined && value !== '') picked[name] = value;
  }
  return picked;
}

function describeOffendingValue(variable: string, value: string): string {
  // Never echo secrets or connection strings (they may carry passwords) into logs.
  if ((SECRET_FILE_SETTINGS as readonly string[]).includes(variable)) return '';
  return ` (got ${JSON.stringify(value.slice(0, 100))})`;
}

function parseIssuer(value: string): string {
  // OIDC Discovery §3: the issuer is an https URL (http allowed here for local development)
  // with no query or fragment.
  if (!URL.canParse(value)) throw new ConfigError('ISSUER is invalid: not an absolute URL');
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError('ISSUER is invalid: must use https (or http for local development)');
  }
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    throw new ConfigError('ISSUER is invalid: must not contain a query or fragment');
  }
  if (value.endsWith('/')) {
    // Endpoint URLs are `${ISSUER}/token`; a trailing slash would also make `iss` differ from
    // what most relying parties configure.
    throw new ConfigError('ISSUER is invalid: must not end with "/"');
  }
  return value;
}

function resolveKeyEncryptionKey(environment: Environment): { key: Uint8Array; developmentOnly: boolean } {
  const encoded = environment.KEY_ENCRYPTION_KEY;
  if (encoded === undefined) {
    if (environment.NODE_ENV === 'production') {
      throw new ConfigError(
        'KEY_ENCRYPTION_KEY is required when NODE_ENV=production, the default (32 random bytes, base64url: `pnpm --filter auth-server keys generate-kek`); NODE_ENV=development uses a dev-only key',
      );
    }
    return { key: DEVELOPMENT_KEY_ENCRYPTION_KEY, developmentOnly: true };
  }
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(encoded)) {
    throw new ConfigError('KEY_ENCRYPTION_KEY is invalid: not base64url');
  }
  const key = Buffer.from(encoded, 'base64url');
  if (key.length !== 32) {
    throw new ConfigError(`KEY_ENCRYPTION_KEY is invalid: decodes to ${key.length} bytes, expected 32`);
  }
  return { key: new Uint8Array(key), developmentOnly: false };
}

/** TRUST_PROXY in the vocabulary both apps share (@oidc-orders/service-kit). */
function parseTrustProxy(value: string | undefined): TrustProxy {
  const parsed = parseKitTrustProxy(value);
  if (parsed === undefined) {
    throw new ConfigError(
      'TRUST_PROXY is invalid: expected true/false, a hop count, or comma-separated proxy addresses',
    );
  }
  return parsed;
}
