import { createHash } from 'node:crypto';
import type { DiscoveredProvider } from './provider.js';

/** What this API learns from a valid access token, whichever its format. */
export interface VerifiedAccessToken {
  format: 'jwt' | 'opaque';
  sub: string | undefined;
  /** Lower-cased, as users are stored. */
  email: string | undefined;
  scopes: string[];
  clientId: string | undefined;
  /**
   * RFC 9449 §6: the thumbprint of the key the token is bound to (`cnf.jkt` of the JWT, or of the
   * introspection response); such a token is usable only with the DPoP scheme and a proof.
   */
  jkt: string | undefined;
}

interface Entry {
  verified: VerifiedAccessToken;
  /** `exp` of the token, ms since the epoch. */
  expiresAtMs: number;
  provider: DiscoveredProvider;
  keysVersion: number;
}

/**
 * JWT access tokens this API has already verified, so a client sending the same token on every
 * request costs one hash and one map lookup instead of an ES256/RS256 verification (14 % of the
 * CPU of `GET /orders` under load). Sound because a JWT access token is judged locally anyway:
 * nothing but time and the keys can change the verdict, and an entry is used only
 * - before the token's `exp` (RFC 9068 §4: no tolerance), and
 * - while the provider object and its key set (`jwksVersion`) are the ones it was verified with:
 *   re-reading the JWKS (every 10 minutes, or for an unknown `kid`) drops every entry's validity,
 *   so a withdrawn key stops being accepted exactly when it would without the cache.
 * Opaque tokens are never cached: introspection is asked every time, so revocation is immediate.
 *
 * Keys are SHA-256 of the token (fixed size; the token itself is not kept). Bounded: the least
 * recently used entry goes first (a Map keeps insertion order; a hit re-inserts). Expired entries
 * are also swept out as inserts go by, so the size follows the tokens still alive (request rate ×
 * token lifetime) instead of filling to the bound with tokens nobody can use any more: a client
 * that refreshes mints a new token each time, and the old one is never asked for again. The sweep
 * runs once the inserts since the last one reach a quarter of the size (at least `MIN_SWEEP_GAP`),
 * so a full pass over the entries costs at most a handful of steps per insert (amortised O(1)).
 */
export class VerifiedTokenCache {
  readonly #entries = new Map<string, Entry>();
  #insertsSinceSweep = 0;

  constructor(readonly maxEntries = 10_000) {}

  get size(): number {
    return this.#entries.size;
  }

  get(token: string, provider: DiscoveredProvider, nowMs: number): VerifiedAccessToken | undefined {
    const key = keyOf(token);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const keysVersion = provider.jwksVersion?.();
    if (entry.expiresAtMs <= nowMs || entry.provider !== provider || entry.keysVersion !== keysVersion) {
      this.#entries.delete(key);
      return undefined;
    }
    // Most recently used last.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.verified;
  }

  /**
   * Remembers a token just verified against `provider`'s current keys; `exp` in seconds, `nowMs`
   * the clock the expired entries are swept against.
   */
  set(
    token: string,
    verified: VerifiedAccessToken,
    exp: number,
    provider: DiscoveredProvider,
    nowMs: number,
  ): void {
    const keysVersion = provider.jwksVersion?.();
    // Without a known key-set version an entry could outlive a withdrawn key: not cached.
    if (keysVersion === undefined) return;
    this.#sweepExpiredNowAndThen(nowMs);
    const key = keyOf(token);
    this.#entries.delete(key);
    this.#entries.set(key, {
      verified: Object.freeze(verified),
      expiresAtMs: exp * 1000,
      provider,
      keysVersion,
    });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** Drops every entry past its `exp` (RFC 9068 §4), once enough inserts paid for the pass. */
  #sweepExpiredNowAndThen(nowMs: number): void {
    this.#insertsSinceSweep += 1;
    if (this.#insertsSinceSweep < Math.max(MIN_SWEEP_GAP, this.#entries.size / 4)) return;
    this.#insertsSinceSweep = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAtMs <= nowMs) this.#entries.delete(key);
    }
  }
}

/** Fewest inserts between two sweeps, so a small cache is not scanned on every insert. */
const MIN_SWEEP_GAP = 64;

function keyOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
