import type { FastifyBaseLogger } from 'fastify';
import type { JWTVerifyGetKey } from 'jose';
import * as client from 'openid-client';
import { SignInUnavailableError } from '../errors.js';
import { JwksCache } from './jwks.js';

export interface ProviderSettings {
  issuer: string;
  clientId: string;
  /** Undefined: a public client (PKCE, no client authentication). */
  clientSecret: string | undefined;
  /** Credentials of this API at the introspection endpoint (RFC 7662 §2.1). */
  resourceId: string;
  resourceSecret: string | undefined;
  allowInsecureRequests: boolean;
  httpTimeoutMs: number;
}

export interface DiscoveryRetryOptions {
  /** First delay after a failed discovery; doubles up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_DISCOVERY_RETRY: DiscoveryRetryOptions = { initialDelayMs: 1000, maxDelayMs: 30_000 };

/** How often an unknown `kid` may trigger a JWKS re-read (a key rotation needs exactly one). */
const JWKS_UNKNOWN_KID_INTERVAL_MS = 30_000;
/** Keys are re-read at least this often even when every `kid` is known (a key may have been withdrawn). */
const JWKS_MAX_AGE_MS = 10 * 60_000;

export type ProviderStatus = 'disabled' | 'discovering' | 'ready';

/** What is known once discovery succeeded. */
export interface DiscoveredProvider {
  /** The relying party (orders-web): authorization, token, revocation, end session, UserInfo. */
  readonly client: client.Configuration;
  /** This API as the introspection caller, or undefined without RESOURCE_SECRET. */
  readonly introspection: client.Configuration | undefined;
  /** Exactly as in the discovery document, compared with `iss` claims. */
  readonly issuer: string;
  /** The provider's signing keys, cached; an unknown `kid` re-reads them once (at most every 30 s). */
  readonly jwks: JWTVerifyGetKey;
  /** `JwksCache.version` of those keys: verified JWTs may be reused only while it is unchanged. */
  readonly jwksVersion?: () => number | undefined;
}

/**
 * The authorization server as this application sees it: metadata read once by discovery and cached
 * for the life of the process. When OIDC_ISSUER is set but the server cannot be reached, the
 * application still starts (its API-key routes do not need it) and discovery is retried in the
 * background with exponential backoff; until then sign-in and bearer routes answer 503.
 */
export class OidcProvider {
  #discovered: DiscoveredProvider | undefined;
  #lastError: string | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #waiters = new Set<() => void>();

  constructor(
    private readonly settings: ProviderSettings | undefined,
    private readonly log: FastifyBaseLogger,
    private readonly retry: DiscoveryRetryOptions = DEFAULT_DISCOVERY_RETRY,
  ) {}

  get status(): ProviderStatus {
    if (!this.settings) return 'disabled';
    return this.#discovered ? 'ready' : 'discovering';
  }

  /** Why the last discovery attempt failed (no secrets: a network or metadata error message). */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** The discovered provider, or SignInUnavailableError (503) naming why there is none. */
  require(feature?: string): DiscoveredProvider {
    if (!this.settings) throw new SignInUnavailableError('not-configured', feature);
    if (!this.#discovered) throw new SignInUnavailableError('discovering', feature);
    return this.#discovered;
  }

  /**
   * One discovery attempt, awaited (so a reachable server is ready before the port opens); on
   * failure the retries continue in the background and this still resolves.
   */
  async start(): Promise<void> {
    if (!this.settings) return;
    await this.#attempt(this.settings, this.retry.initialDelayMs);
  }

  /** Resolves once discovery succeeded (tests and readiness-minded callers). */
  whenReady(): Promise<void> {
    if (this.#discovered) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.add(resolve));
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
  }

  async #attempt(settings: ProviderSettings, nextDelayMs: number): Promise<void> {
    if (this.#closed) return;
    try {
      this.#discovered = await discover(settings);
      this.#lastError = undefined;
      this.log.info({ issuer: this.#discovered.issuer }, 'OIDC discovery done; sign-in is available');
      for (const resolve of this.#waiters) resolve();
      this.#waiters.clear();
    } catch (error) {
      this.#lastError = describeError(error);
      this.log.warn(
        { issuer: settings.issuer, reason: this.#lastError, retryInMs: nextDelayMs },
        'OIDC discovery failed; sign-in and bearer routes answer 503 until it succeeds',
      );
      if (this.#closed) return;
      this.#retryTimer = setTimeout(
        () => void this.#attempt(settings, Math.min(nextDelayMs * 2, this.retry.maxDelayMs)),
        nextDelayMs,
      );
      // A pending retry must not keep a closing process alive.
      this.#retryTimer.unref();
    }
  }
}

async function discover(settings: ProviderSettings): Promise<DiscoveredProvider> {
  const timeoutSeconds = Math.max(1, Math.ceil(settings.httpTimeoutMs / 1000));
  const execute = settings.allowInsecureRequests ? [client.allowInsecureRequests] : [];
  const clientAuthentication = settings.clientSecret
    ? client.ClientSecretBasic(settings.clientSecret)
    : client.None();
  const rp = await client.discovery(
    new URL(settings.issuer),
    settings.clientId,
    undefined,
    clientAuthentication,
    { execute, timeout: timeoutSeconds },
  );
  const metadata = rp.serverMetadata();
  if (!metadata.jwks_uri) throw new Error('the discovery document has no jwks_uri');

  let introspection: client.Configuration | undefined;
  if (settings.resourceSecret && metadata.introspection_endpoint) {
    // RFC 7662 §2.1: the protected resource authenticates itself; it is not the sign-in client.
    introspection = new client.Configuration(
      metadata,
      settings.resourceId,
      undefined,
      client.ClientSecretBasic(settings.resourceSecret),
    );
    introspection.timeout = timeoutSeconds;
    for (const apply of execute) apply(introspection);
  }

  const keys = new JwksCache(new URL(metadata.jwks_uri), {
    timeoutMs: settings.httpTimeoutMs,
    maxAgeMs: JWKS_MAX_AGE_MS,
    unknownKidIntervalMs: JWKS_UNKNOWN_KID_INTERVAL_MS,
  });
  return {
    client: rp,
    introspection,
    issuer: metadata.issuer,
    jwks: keys.getKey,
    jwksVersion: keys.version,
  };
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
