import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/**
 * What a JWT verified against the provider's JWKS (access tokens, logout tokens) may be signed
 * with: asymmetric algorithms only (RFC 8725 §3.1), since a JWKS never legitimately carries a
 * shared secret, and `none` is never accepted.
 */
export const ACCEPTED_ALGORITHMS: readonly string[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

export interface JwksCacheOptions {
  /** Bound of one JWKS request. */
  timeoutMs: number;
  /** Keys are re-read at least this often, so a withdrawn key stops being accepted. */
  maxAgeMs: number;
  /**
   * Least time between two re-reads caused by an unknown `kid`: a rotation needs one, and tokens
   * with made-up `kid`s must not turn this service into a load generator against the provider.
   */
  unknownKidIntervalMs: number;
}

/**
 * The provider's signing keys (RFC 7517 JWKS at `jwks_uri`), read once and cached. A token whose
 * `kid` is not in the cache triggers one re-read (a key rotation), then the token is judged on the
 * fresh set; concurrent callers share one request.
 */
export class JwksCache {
  #keys: JWTVerifyGetKey | undefined;
  #fetchedAt = 0;
  #lastUnknownKidReload = Number.NEGATIVE_INFINITY;
  #reloading: Promise<void> | undefined;
  #version = 0;

  constructor(
    private readonly url: URL,
    private readonly options: JwksCacheOptions,
  ) {}

  /**
   * Which key set verifications would use now: a number that changes whenever the keys are re-read,
   * or `undefined` when none are loaded or they are older than `maxAgeMs` (the next verification
   * re-reads them first). A cache of verified tokens keeps an entry only while this is unchanged,
   * so a key withdrawn from the JWKS stops being accepted exactly as soon as without the cache.
   */
  readonly version = (): number | undefined =>
    this.#keys && Date.now() - this.#fetchedAt < this.options.maxAgeMs ? this.#version : undefined;

  /** A key resolver for jose's `jwtVerify`. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (!this.#keys || Date.now() - this.#fetchedAt >= this.options.maxAgeMs) await this.#reload();
    try {
      return await this.#keys!(header, token);
    } catch (error) {
      const now = Date.now();
      if (
        !(error instanceof errors.JWKSNoMatchingKey) ||
        now - this.#lastUnknownKidReload < this.options.unknownKidIntervalMs
      ) {
        throw error;
      }
      this.#lastUnknownKidReload = now;
      await this.#reload();
      return this.#keys!(header, token);
    }
  };

  #reload(): Promise<void> {
    this.#reloading ??= this.#fetch().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  async #fetch(): Promise<void> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      throw new errors.JWKSTimeout(
        `the JWKS could not be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (response.status !== 200)
      throw new errors.JWKSInvalid(`the JWKS endpoint answered ${response.status}`);
    const jwks = (await response.json()) as JSONWebKeySet;
    // createLocalJWKSet validates the document's shape and throws JWKSInvalid when it is not a JWKS.
    this.#keys = createLocalJWKSet(jwks);
    this.#fetchedAt = Date.now();
    this.#version += 1;
  }
}
