import { randomBytes } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { protectedResourceMetadataUrl } from '@oidc-orders/oauth-core';
import {
  parseDatabaseUrl,
  parseTrustProxy,
  resolveSecretFiles,
  SecretFileError,
  type TrustProxy,
} from '@oidc-orders/service-kit';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { MAX_NUMERIC_12_2_CENTS, parseAmountToCents } from './money.js';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    expectation: string,
  ) {
    // One line that names the variable; values are never echoed because some of them are secrets.
    super(`${variable} ${expectation}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const DIGITS = '^[0-9]+$';
const BOOLEAN = '^(true|false|1|0)$';

/**
 * The raw environment as validated strings. Conversion to numbers, booleans and cents happens
 * after the check so each variable has exactly one error message (see EXPECTATIONS).
 */
const EnvironmentSchema = Type.Object({
  NODE_ENV: Type.Optional(Type.String()),
  DATABASE_URL: Type.String(),
  DATABASE_CONNECT_TIMEOUT_MS: Type.Optional(Type.String({ pattern: DIGITS })),
  PORT: Type.Optional(Type.String({ pattern: DIGITS })),
  HOST: Type.Optional(Type.String()),
  LOG_LEVEL: Type.Optional(Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))),
  API_KEY: Type.Optional(Type.String()),
  OIDC_ISSUER: Type.Optional(Type.String()),
  OIDC_CLIENT_ID: Type.Optional(Type.String()),
  OIDC_CLIENT_SECRET: Type.Optional(Type.String()),
  BASE_URL: Type.Optional(Type.String()),
  OIDC_SCOPES: Type.Optional(Type.String()),
  OIDC_SAVE_TOKENS: Type.Optional(Type.String({ pattern: BOOLEAN })),
  OIDC_FETCH_USERINFO: Type.Optional(Type.String({ pattern: BOOLEAN })),
  SESSION_SECRET: Type.Optional(Type.String()),
  SESSION_TTL_SECONDS: Type.Optional(Type.String({ pattern: DIGITS })),
  OIDC_ROLE_CLAIM: Type.Optional(Type.String({ pattern: '^[^\\s]+$' })),
  OIDC_HTTP_TIMEOUT_MS: Type.Optional(Type.String({ pattern: DIGITS })),
  TOKEN_REFRESH_SKEW_SECONDS: Type.Optional(Type.String({ pattern: DIGITS })),
  RESOURCE_ID: Type.Optional(Type.String()),
  RESOURCE_SECRET: Type.Optional(Type.String()),
  UPSTREAM_API_URL: Type.Optional(Type.String()),
  UPSTREAM_TIMEOUT_MS: Type.Optional(Type.String({ pattern: DIGITS })),
  SHUTDOWN_PAUSE_MS: Type.Optional(Type.String({ pattern: DIGITS })),
  SHUTDOWN_TIMEOUT_MS: Type.Optional(Type.String({ pattern: DIGITS })),
  TRUST_PROXY: Type.Optional(Type.String()),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  ORDER_UNIT_PRICE: Type.Optional(Type.String()),
  ORDER_TX_TIMEOUT_MS: Type.Optional(Type.String({ pattern: DIGITS })),
  ALLOWED_CORS_ORIGINS: Type.Optional(Type.String()),
});
type Environment = Static<typeof EnvironmentSchema>;
type Variable = keyof Environment;

const EXPECTATIONS: Record<Variable, string> = {
  NODE_ENV: 'must be a string',
  DATABASE_URL: 'is required and must be postgres://user@host:port/db, pglite://memory or pglite://<dir>',
  DATABASE_CONNECT_TIMEOUT_MS: 'must be a positive integer (milliseconds)',
  PORT: 'must be an integer from 0 to 65535',
  HOST: 'must be a host name or address',
  LOG_LEVEL: `must be one of ${LOG_LEVELS.join(', ')}`,
  API_KEY: 'is required outside development (NODE_ENV=development generates a dev-only key)',
  OIDC_ISSUER:
    'must be an absolute http(s) URL; http only for a loopback address or with NODE_ENV=development or test',
  OIDC_CLIENT_ID: 'is required when OIDC_ISSUER is set',
  OIDC_CLIENT_SECRET: 'must be a string',
  BASE_URL: 'must be an absolute http(s) URL',
  OIDC_SCOPES: 'must be a space-separated list of scopes',
  OIDC_SAVE_TOKENS: 'must be true, false, 1 or 0',
  OIDC_FETCH_USERINFO: 'must be true, false, 1 or 0',
  SESSION_SECRET:
    'must be at least 32 characters; required when OIDC_ISSUER is set (NODE_ENV=development generates one)',
  SESSION_TTL_SECONDS: 'must be a positive integer (seconds)',
  OIDC_ROLE_CLAIM: 'must be a claim name (no spaces)',
  OIDC_HTTP_TIMEOUT_MS: 'must be a positive integer (milliseconds)',
  TOKEN_REFRESH_SKEW_SECONDS: 'must be a non-negative integer (seconds)',
  RESOURCE_ID: 'must be a string',
  RESOURCE_SECRET: 'must be a string',
  UPSTREAM_API_URL: 'must be an absolute http(s) URL',
  UPSTREAM_TIMEOUT_MS: 'must be a positive integer (milliseconds)',
  SHUTDOWN_PAUSE_MS: 'must be a non-negative integer (milliseconds) below SHUTDOWN_TIMEOUT_MS',
  SHUTDOWN_TIMEOUT_MS: 'must be a positive integer (milliseconds) above SHUTDOWN_PAUSE_MS',
  TRUST_PROXY: 'must be true, false, a hop count, or a comma-separated list of addresses/CIDRs to trust',
  METRICS_TOKEN: 'must be at least 16 characters (it guards GET /metrics from other than loopback)',
  ORDER_UNIT_PRICE: 'must be a decimal amount with at most 2 decimals, like 9.99, not above 9999999999.99',
  ORDER_TX_TIMEOUT_MS: 'must be a positive integer (milliseconds)',
  ALLOWED_CORS_ORIGINS:
    'must be a comma- or space-separated list of origins (scheme://host[:port], no path), like http://localhost:5173',
};

export interface AppConfig {
  nodeEnv: string;
  isDevelopment: boolean;
  databaseUrl: string;
  databaseConnectTimeoutMs: number;
  port: number;
  host: string;
  logLevel: LogLevel;
  apiKey: string;
  /** `generated-dev-only` only ever happens with NODE_ENV=development. */
  apiKeySource: 'environment' | 'generated-dev-only';
  baseUrl: string;
  /** Sign-in (relying party) and bearer-token (resource server) settings. */
  oidc: {
    /** Undefined: no sign-in, no bearer tokens; the API-key routes still work. */
    issuer: string | undefined;
    /** Always set when `issuer` is. */
    clientId: string | undefined;
    /** Undefined: a public client (PKCE only). */
    clientSecret: string | undefined;
    /** Space-separated, always holding `openid` and `profile`. */
    scopes: string;
    saveTokens: boolean;
    fetchUserinfo: boolean;
    /** Claim whose value(s) are the user's roles. */
    roleClaim: string;
    /** http issuers are accepted only in development/test or on a loopback address. */
    allowInsecureRequests: boolean;
    /** Bound of each request to the authorization server (discovery, token, JWKS, introspection). */
    httpTimeoutMs: number;
    /** Refresh the access token when less than min(this, half its lifetime) is left. */
    refreshSkewSeconds: number;
  };
  /** Set whenever `oidc.issuer` is (required outside development, generated in development). */
  sessionSecret: string | undefined;
  sessionSecretSource: 'environment' | 'generated-dev-only' | 'unset';
  /** Absolute lifetime of a sign-in session (store row and cookie). */
  sessionTtlSeconds: number;
  resourceId: string;
  /**
   * RFC 9728: where this resource's metadata is published, when RESOURCE_ID is an absolute
   * http(s) URL and OIDC_ISSUER is set (the metadata names the issuer); undefined otherwise.
   */
  resourceMetadataUrl: string | undefined;
  resourceSecret: string | undefined;
  upstreamApiUrl: string;
  upstreamTimeoutMs: number;
  shutdownPauseMs: number;
  shutdownTimeoutMs: number;
  trustProxy: TrustProxy;
  /** GET /metrics from other than loopback needs `Authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: string | undefined;
  orderUnitPriceCents: bigint;
  orderTxTimeoutMs: number;
  /**
   * Browser origins (public-client SPAs) allowed to call the bearer API (`GET /orders`,
   * `GET /orders/:id`) cross-origin. Never the BFF, the sign-in routes or the API-key routes.
   */
  allowedCorsOrigins: string[];
}

export interface ParseConfigOptions {
  /** Source of dev-only secrets; injectable so tests are deterministic. */
  generateSecret?: () => string;
}

const MAX_PORT = 65_535;

function generateRandomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The settings that may come from a file instead (`API_KEY_FILE=/run/secrets/…`), so that
 * docker-compose secrets keep them out of `docker inspect` (docs/configuration.md "Secrets from
 * files").
 */
export const SECRET_FILE_SETTINGS = [
  'DATABASE_URL',
  'API_KEY',
  'SESSION_SECRET',
  'OIDC_CLIENT_SECRET',
  'RESOURCE_SECRET',
  'METRICS_TOKEN',
] as const;

function withSecretFiles(env: Record<string, string | undefined>) {
  try {
    return resolveSecretFiles(env, SECRET_FILE_SETTINGS);
  } catch (error) {
    if (error instanceof SecretFileError) throw new ConfigError(error.variable, error.problem);
    throw error;
  }
}

/**
 * Validates and converts the environment once. Pure apart from `generateSecret`: it never reads
 * process.env itself and throws ConfigError naming the first offending variable (the checks run
 * in a fixed order, so which one is first does not depend on the object's key order).
 */
export function loadConfig(
  rawEnvironment: Record<string, string | undefined>,
  { generateSecret = generateRandomSecret }: ParseConfigOptions = {},
): AppConfig {
  const env = validatedEnvironment(rawEnvironment);
  const nodeEnv = env.NODE_ENV ?? 'production';
  const isDevelopment = nodeEnv === 'development';

  if (!parseDatabaseUrl(env.DATABASE_URL)) failOn('DATABASE_URL');
  const port = Number(env.PORT ?? '3000');
  if (port > MAX_PORT) failOn('PORT');
  const apiKey = apiKeyFrom(env, isDevelopment, generateSecret);
  const session = sessionSecretFrom(env, isDevelopment, generateSecret);
  const baseUrl = env.BASE_URL ?? 'http://localhost:3000';
  if (!isHttpUrl(baseUrl)) failOn('BASE_URL');
  const signIn = signInSettings(env, nodeEnv, session.sessionSecret);
  const upstreamApiUrl = env.UPSTREAM_API_URL ?? `http://127.0.0.1:${port}/orders`;
  if (!isHttpUrl(upstreamApiUrl)) failOn('UPSTREAM_API_URL');
  const shutdown = shutdownTimings(env);
  const orderUnitPriceCents = orderUnitPrice(env);
  const allowedCorsOrigins = parseOrigins(env.ALLOWED_CORS_ORIGINS) ?? failOn('ALLOWED_CORS_ORIGINS');
  const limits = timeoutsAndProxies(env);

  return {
    nodeEnv,
    isDevelopment,
    databaseUrl: resolvePgliteDirectory(env.DATABASE_URL, startDirectory(rawEnvironment)),
    databaseConnectTimeoutMs: limits.databaseConnectTimeoutMs,
    port,
    host: env.HOST ?? '0.0.0.0',
    logLevel: env.LOG_LEVEL ?? 'info',
    ...apiKey,
    // Without a trailing slash so `${baseUrl}/signin-oidc` never produces `//signin-oidc`.
    baseUrl: baseUrl.replace(/\/+$/, ''),
    oidc: {
      issuer: signIn.issuer,
      clientId: env.OIDC_CLIENT_ID,
      clientSecret: env.OIDC_CLIENT_SECRET,
      scopes: signIn.scopes,
      saveTokens: signIn.saveTokens,
      fetchUserinfo: parseBoolean(env.OIDC_FETCH_USERINFO, false),
      roleClaim: env.OIDC_ROLE_CLAIM ?? 'role',
      allowInsecureRequests: signIn.allowInsecureRequests,
      httpTimeoutMs: limits.oidcHttpTimeoutMs,
      refreshSkewSeconds: Number(env.TOKEN_REFRESH_SKEW_SECONDS ?? '60'),
    },
    ...session,
    sessionTtlSeconds: limits.sessionTtlSeconds,
    resourceId: env.RESOURCE_ID ?? 'orders-api',
    resourceMetadataUrl:
      signIn.issuer === undefined ? undefined : protectedResourceMetadataUrl(env.RESOURCE_ID ?? 'orders-api'),
    resourceSecret: env.RESOURCE_SECRET,
    upstreamApiUrl,
    upstreamTimeoutMs: limits.upstreamTimeoutMs,
    ...shutdown,
    trustProxy: limits.trustProxy,
    metricsToken: env.METRICS_TOKEN,
    orderUnitPriceCents,
    orderTxTimeoutMs: limits.orderTxTimeoutMs,
    allowedCorsOrigins,
  };
}

function failOn(variable: Variable): never {
  throw new ConfigError(variable, EXPECTATIONS[variable]);
}

/** Secret files resolved, unset values dropped, every variable's shape checked by the schema. */
function validatedEnvironment(rawEnvironment: Record<string, string | undefined>): Environment {
  // `VAR=` in a shell or compose file means "not set", not "set to the empty string".
  const environment = Object.fromEntries(
    Object.entries(withSecretFiles(rawEnvironment)).filter(
      ([, value]) => value !== undefined && value !== '',
    ),
  );
  const firstError = Value.Errors(EnvironmentSchema, environment).First();
  if (firstError) failOn(firstError.path.split('/')[1] as Variable);
  return environment as Environment;
}

function apiKeyFrom(
  env: Environment,
  isDevelopment: boolean,
  generateSecret: () => string,
): Pick<AppConfig, 'apiKey' | 'apiKeySource'> {
  if (env.API_KEY !== undefined) return { apiKey: env.API_KEY, apiKeySource: 'environment' };
  if (!isDevelopment) failOn('API_KEY');
  return { apiKey: generateSecret(), apiKeySource: 'generated-dev-only' };
}

function sessionSecretFrom(
  env: Environment,
  isDevelopment: boolean,
  generateSecret: () => string,
): Pick<AppConfig, 'sessionSecret' | 'sessionSecretSource'> {
  const sessionSecret = env.SESSION_SECRET;
  if (sessionSecret !== undefined && sessionSecret.length < 32) failOn('SESSION_SECRET');
  if (sessionSecret !== undefined) return { sessionSecret, sessionSecretSource: 'environment' };
  return isDevelopment
    ? { sessionSecret: generateSecret(), sessionSecretSource: 'generated-dev-only' }
    : { sessionSecret: undefined, sessionSecretSource: 'unset' };
}

/** The relying-party settings that need checking together: issuer, its scheme, client, scopes. */
function signInSettings(
  env: Environment,
  nodeEnv: string,
  sessionSecret: string | undefined,
): Pick<AppConfig['oidc'], 'issuer' | 'allowInsecureRequests' | 'saveTokens' | 'scopes'> {
  // The issuer is compared byte for byte with `iss` (OpenID Connect Discovery §4.3), so it is kept
  // exactly as given, trailing slash included.
  const issuer =
    env.OIDC_ISSUER === undefined
      ? undefined
      : isHttpUrl(env.OIDC_ISSUER)
        ? env.OIDC_ISSUER
        : failOn('OIDC_ISSUER');
  // RFC 9700 §2.6 / OIDC Core §16.17: tokens travel only over TLS. Plain http is for a developer's
  // machine, tests and an authorization server on the same host (loopback never leaves it).
  const allowInsecureRequests =
    issuer !== undefined && new URL(issuer).protocol === 'http:'
      ? nodeEnv === 'development' || nodeEnv === 'test' || isLoopbackUrl(issuer) || failOn('OIDC_ISSUER')
      : false;
  if (issuer !== undefined && env.OIDC_CLIENT_ID === undefined) failOn('OIDC_CLIENT_ID');
  // The session secret protects `state` and the stored tokens; without sign-in nothing uses it.
  if (issuer !== undefined && sessionSecret === undefined) failOn('SESSION_SECRET');
  const saveTokens = parseBoolean(env.OIDC_SAVE_TOKENS, true);
  return { issuer, allowInsecureRequests, saveTokens, scopes: signInScopes(env.OIDC_SCOPES, saveTokens) };
}

function signInScopes(configured: string | undefined, saveTokens: boolean): string {
  // `offline_access orders.read` only serve the BFF's API calls, i.e. only when tokens are kept.
  const configuredScopes =
    configured ?? (saveTokens ? 'openid profile email offline_access orders.read' : 'openid profile email');
  // OIDC Core §3.1.2.1: `openid` makes it an OpenID request; `profile` carries the `name` claim.
  return [...new Set(['openid', 'profile', ...configuredScopes.split(' ').filter(Boolean)])].join(' ');
}

function shutdownTimings(env: Environment): Pick<AppConfig, 'shutdownPauseMs' | 'shutdownTimeoutMs'> {
  const shutdownPauseMs = Number(env.SHUTDOWN_PAUSE_MS ?? '10000');
  const shutdownTimeoutMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? '25000');
  if (shutdownTimeoutMs <= 0) failOn('SHUTDOWN_TIMEOUT_MS');
  if (shutdownPauseMs >= shutdownTimeoutMs) failOn('SHUTDOWN_PAUSE_MS');
  return { shutdownPauseMs, shutdownTimeoutMs };
}

function orderUnitPrice(env: Environment): bigint {
  const cents = parseAmountToCents(env.ORDER_UNIT_PRICE ?? '9.99');
  if (cents === undefined || cents > MAX_NUMERIC_12_2_CENTS) return failOn('ORDER_UNIT_PRICE');
  return cents;
}

/** The positive durations and the proxy trust, checked in this order. */
function timeoutsAndProxies(env: Environment) {
  return {
    databaseConnectTimeoutMs:
      positiveInteger(env.DATABASE_CONNECT_TIMEOUT_MS, 5000) ?? failOn('DATABASE_CONNECT_TIMEOUT_MS'),
    oidcHttpTimeoutMs: positiveInteger(env.OIDC_HTTP_TIMEOUT_MS, 5000) ?? failOn('OIDC_HTTP_TIMEOUT_MS'),
    sessionTtlSeconds: positiveInteger(env.SESSION_TTL_SECONDS, 8 * 3600) ?? failOn('SESSION_TTL_SECONDS'),
    upstreamTimeoutMs: positiveInteger(env.UPSTREAM_TIMEOUT_MS, 5000) ?? failOn('UPSTREAM_TIMEOUT_MS'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY) ?? failOn('TRUST_PROXY'),
    orderTxTimeoutMs: positiveInteger(env.ORDER_TX_TIMEOUT_MS, 5000) ?? failOn('ORDER_TX_TIMEOUT_MS'),
  };
}

/**
 * Exact origins, compared byte for byte with the `Origin` header (RFC 6454 §7), so each must be
 * written the way a browser serializes it: lower-case scheme and host, no default port, no path.
 */
function parseOrigins(value: string | undefined): string[] | undefined {
  if (value === undefined) return [];
  const origins = value.split(/[\s,]+/).filter(Boolean);
  for (const origin of origins) {
    if (!isHttpUrl(origin) || new URL(origin).origin !== origin) return undefined;
  }
  return [...new Set(origins)];
}

function positiveInteger(value: string | undefined, fallback: number): number | undefined {
  const parsed = Number(value ?? fallback);
  return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : undefined;
}

function parseBoolean(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  return value === 'true' || value === '1';
}

function isLoopbackUrl(value: string): boolean {
  const { hostname } = new URL(value);
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

/**
 * Relative paths are the user's: `pnpm --filter orders start` runs in apps/orders, so
 * `pglite://.data/orders` is resolved against the directory pnpm was started from (INIT_CWD, set
 * by pnpm and npm), and error messages name the resolved directory.
 */
function startDirectory(env: Readonly<Record<string, string | undefined>>): string {
  return env.INIT_CWD && isAbsolute(env.INIT_CWD) ? env.INIT_CWD : process.cwd();
}

function resolvePgliteDirectory(url: string, baseDirectory: string): string {
  const location = parseDatabaseUrl(url);
  if (location?.driver !== 'pglite' || location.dataDir === undefined || isAbsolute(location.dataDir))
    return url;
  return `pglite://${resolve(baseDirectory, location.dataDir)}`;
}
