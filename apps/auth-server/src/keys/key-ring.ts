import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import type {
  Clock,
  JwsSigningKey,
  JwtType,
  SigningAlg,
  SigningKeyRecord,
  TokenSigner,
  TokenVerifier,
} from '@oidc-orders/oauth-core';
import { encodeJwsHeader, jwsSigningKey, serverError, signCompactJws } from '@oidc-orders/oauth-core';
import type { JWK, JWTPayload } from 'jose';
import { type CryptoKey, decodeProtectedHeader, importJWK, errors as joseErrors, jwtVerify } from 'jose';
import { decryptPrivateKey } from './key-encryption.js';

/**
 * The server's signing keys, decrypted and imported once at start-up and kept in memory, so that
 * signing a token never touches the database or re-imports a key.
 */
interface LoadedKey {
  kid: string;
  alg: SigningAlg;
  publicJwk: JWK;
  /** node:crypto form of the private key, checked against `alg`, for oauth-core's `signCompactJws`. */
  signingKey: JwsSigningKey;
  publicKey: CryptoKey;
  activatesAt: number;
  retiresAt: number | null;
  removeAfter: number | null;
}

export const SUPPORTED_SIGNING_ALGS: readonly SigningAlg[] = ['RS256', 'ES256'];

export interface JsonWebKeySet {
  keys: JWK[];
}

/** At most one reload per this many seconds is triggered by tokens naming an unknown `kid`. */
export const UNKNOWN_KID_RELOAD_INTERVAL_SECONDS = 10;

export class KeyRing implements TokenSigner, TokenVerifier {
  private reload: (() => Promise<readonly SigningKeyRecord[]>) | null = null;
  private lastReloadAt = Number.NEGATIVE_INFINITY;
  private pendingReload: Promise<void> | null = null;
  /** Encoded JWS headers by kid, alg and typ: a handful of entries (keys ever loaded × token types). */
  private readonly encodedHeaders = new Map<string, string>();

  private constructor(
    private keys: readonly LoadedKey[],
    private readonly keyEncryptionKey: Uint8Array,
    private readonly clock: Clock,
    private readonly issuer: string,
  ) {}

  /** Decrypts every stored key; throws `KeyDecryptionError` when KEY_ENCRYPTION_KEY is wrong. */
  static async load(
    records: readonly SigningKeyRecord[],
    keyEncryptionKey: Uint8Array,
    options: { clock: Clock; issuer: string },
  ): Promise<KeyRing> {
    const keys = await Promise.all(records.map((record) => importRecord(record, keyEncryptionKey)));
    return new KeyRing(keys, keyEncryptionKey, options.clock, options.issuer);
  }

  /**
   * Takes the current rows of the key table (another instance or the `keys rotate` command may have
   * added or retired keys): new keys are decrypted and imported, known ones keep their imported
   * form with the row's current dates, deleted ones are dropped.
   */
  async refresh(records: readonly SigningKeyRecord[]): Promise<void> {
    const known = new Map(this.keys.map((key) => [key.kid, key]));
    this.keys = await Promise.all(
      records.map(async (record) => {
        const existing = known.get(record.kid);
        if (!existing) return importRecord(record, this.keyEncryptionKey);
        return {
          ...existing,
          activatesAt: record.activatesAt,
          retiresAt: record.retiresAt,
          removeAfter: record.removeAfter,
        };
      }),
    );
  }

  /**
   * Where `reloadKeys` reads the key table. Set by the server, so that a token signed by a key this
   * instance has not loaded yet (another instance rotated and refreshed first) triggers a reload
   * instead of failing until the next periodic refresh.
   */
  setReloader(reload: () => Promise<readonly SigningKeyRecord[]>): void {
    this.reload = reload;
  }

  /** Re-reads the key table now (the periodic refresh, and unknown kids). Concurrent calls share one read. */
  async reloadKeys(): Promise<void> {
    if (this.reload === null) return;
    const reload = this.reload;
    this.pendingReload ??= (async () => {
      try {
        this.lastReloadAt = this.clock.nowSeconds();
        await this.refresh(await reload());
      } finally {
        this.pendingReload = null;
      }
    })();
    return this.pendingReload;
  }

  private knows(kid: string | undefined): boolean {
    return this.keys.some((key) => key.kid === kid);
  }

  /** The keys published at /jwks: every key not yet past `removeAfter`, public members only. */
  jwks(): JsonWebKeySet {
    const now = this.clock.nowSeconds();
    return {
      keys: this.keys
        .filter((key) => key.removeAfter === null || key.removeAfter > now)
        .map((key) => key.publicJwk),
    };
  }

  /** The newest key of `alg` that is active now (published earlier, not retired). */
  activeKey(alg: SigningAlg): LoadedKey | undefined {
    const now = this.clock.nowSeconds();
    let newest: LoadedKey | undefined;
    for (const key of this.keys) {
      if (key.alg !== alg || key.activatesAt > now || (key.retiresAt !== null && key.retiresAt <= now))
        continue;
      if (!newest || key.activatesAt > newest.activatesAt) newest = key;
    }
    return newest;
  }

  /** Seconds since the active key of `alg` started signing (the key-age metric); undefined without one. */
  activeKeyAgeSeconds(alg: SigningAlg): number | undefined {
    const key = this.activeKey(alg);
    return key === undefined ? undefined : this.clock.nowSeconds() - key.activatesAt;
  }

  hasActiveKeyFor(alg: SigningAlg): boolean {
    return this.activeKey(alg) !== undefined;
  }

  /**
   * A compact JWS (RFC 7515 §7.1) by oauth-core's `signCompactJws`: node:crypto's one-shot `sign` on
   * the imported KeyObject, header `{alg, kid, typ}` and the claims as given, the same bytes as jose's
   * `SignJWT` at less CPU and with no thread-pool hop (bench/README.md, "Signing").
   */
  async sign(claims: JWTPayload, options: { alg: SigningAlg; typ: JwtType }): Promise<string> {
    const key = this.activeKey(options.alg);
    if (!key) throw serverError(`no active ${options.alg} signing key`);
    return signCompactJws(key.signingKey, this.encodedHeader(key, options.typ), claims);
  }

  /**
   * The protected header's segment (RFC 7515 §7.1: BASE64URL(UTF8(JWS Protected Header))). It depends
   * only on the key and the token type, so it is encoded once per pair instead of once per token.
   */
  private encodedHeader(key: LoadedKey, typ: JwtType): string {
    const cacheKey = `${key.kid}\u0000${key.alg}\u0000${typ}`;
    let header = this.encodedHeaders.get(cacheKey);
    if (header === undefined) {
      header = encodeJwsHeader(key.signingKey, typ);
      this.encodedHeaders.set(cacheKey, header);
    }
    return header;
  }

  async verify(jwt: string, options: { typ?: JwtType; ignoreExpiration?: boolean }): Promise<JWTPayload> {
    const verifyOptions = {
      issuer: this.issuer,
      algorithms: [...SUPPORTED_SIGNING_ALGS],
      currentDate: new Date(this.clock.nowSeconds() * 1000),
      ...(options.typ === undefined ? {} : { typ: options.typ }),
    };
    const keyFor = (header: { kid?: string; alg?: string }) => {
      const key = this.keys.find((candidate) => candidate.kid === header.kid && candidate.alg === header.alg);
      if (!key) throw new joseErrors.JWKSNoMatchingKey();
      return key.publicKey;
    };
    try {
      // A kid we do not know may be a key another instance started signing with after a rotation:
      // re-read the table (rate-limited, so garbage kids cannot turn into database load).
      const { kid } = decodeProtectedHeader(jwt);
      if (
        !this.knows(kid) &&
        this.reload !== null &&
        this.clock.nowSeconds() - this.lastReloadAt >= UNKNOWN_KID_RELOAD_INTERVAL_SECONDS
      ) {
        // A failed read leaves the loaded keys; the token then fails as unknown, as before.
        await this.reloadKeys().catch(() => {});
      }
      const { payload } = await jwtVerify(jwt, keyFor, verifyOptions);
      return payload;
    } catch (error) {
      // jose checks the signature before the claims, so a JWTExpired error carries a payload whose
      // signature is already verified. OIDC RP-Initiated Logout §2 accepts an expired
      // id_token_hint, which is what `ignoreExpiration` serves.
      if (options.ignoreExpiration && error instanceof joseErrors.JWTExpired) return error.payload;
      throw error;
    }
  }
}

async function importRecord(record: SigningKeyRecord, keyEncryptionKey: Uint8Array): Promise<LoadedKey> {
  const privateJwk = JSON.parse(
    decryptPrivateKey(keyEncryptionKey, record.kid, record.privateKeyCiphertext),
  ) as JWK;
  const privateKey = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
  const signingKey = jwsSigningKey(record.alg, record.kid, privateKey);
  const publicKey = await importJWK(record.publicJwk, record.alg);
  return {
    kid: record.kid,
    alg: record.alg,
    publicJwk: publicJwkOf(record),
    signingKey,
    publicKey: publicKey as CryptoKey,
    activatesAt: record.activatesAt,
    retiresAt: record.retiresAt,
    removeAfter: record.removeAfter,
  };
}

function publicJwkOf(record: SigningKeyRecord): JWK {
  // Only the public members, whatever else the stored JWK holds (RFC 7517 §4 / §6).
  const { kty, n, e, crv, x, y } = record.publicJwk;
  const members = { kty, n, e, crv, x, y };
  const publicOnly = Object.fromEntries(Object.entries(members).filter(([, value]) => value !== undefined));
  return { ...publicOnly, kid: record.kid, alg: record.alg, use: 'sig' };
}
