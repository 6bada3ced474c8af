/**
 * Test doubles for this package and for the server's tests (export `@oidc-orders/oauth-core/testing`).
 * The store contract suites are `@oidc-orders/oauth-core/store-contract` (test-support/).
 */
import { createHash, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet, type JWK, type JWTPayload } from 'jose';
import type { SigningAlg } from './model.js';
import type { Clock, RandomSource } from './runtime.js';
import { encodeJwsHeader, type JwsSigningKey, jwsSigningKey, signCompactJws } from './tokens/compact-jws.js';
import type { TokenSigner, TokenVerifier } from './tokens/signer.js';

export interface TestClock extends Clock {
  /** Moves time forward (or back, with a negative value) by whole seconds. */
  advance(seconds: number): void;
  set(nowSeconds: number): void;
}

/** A clock that stands still until told to move. Default start: 2023-11-14T22:13:20Z. */
export function createTestClock(start = 1_700_000_000): TestClock {
  let now = start;
  return {
    nowSeconds: () => now,
    advance: (seconds) => {
      now += seconds;
    },
    set: (value) => {
      now = value;
    },
  };
}

/**
 * Deterministic bytes (SHA-256 in counter mode over a seed): reproducible tests, distinct values.
 * Not secure; for tests only.
 */
export function createTestRandom(seed = 'oauth-core-test'): RandomSource {
  let counter = 0;
  return {
    bytes(length) {
      const out = new Uint8Array(length);
      let filled = 0;
      while (filled < length) {
        const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
        const take = Math.min(block.length, length - filled);
        out.set(block.subarray(0, take), filled);
        filled += take;
      }
      return out;
    },
  };
}

export { createMemoryStores, type MemoryStores, type StoreSeed } from './storage/memory.js';
export { createMemoryDpopReplayStore } from './storage/memory-dpop-replay.js';
export { createMemoryPushedAuthorizationRequestStore } from './storage/memory-pushed-authorization-requests.js';

let testKeyPairs: Promise<Array<{ signingKey: JwsSigningKey; jwk: JWK }>> | undefined;

const generateNodeKeyPair = promisify(generateKeyPair);

/** A node:crypto key pair for `alg`, as the server generates them (RSA 2048, P-256). */
async function generateTestKeyPair(
  alg: SigningAlg,
): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return alg === 'RS256'
    ? generateNodeKeyPair('rsa', { modulusLength: 2048 })
    : generateNodeKeyPair('ec', { namedCurve: 'P-256' });
}

export interface TestKeys {
  signer: TokenSigner;
  verifier: TokenVerifier;
  /** The public keys, as a JWKS would publish them. */
  jwks: JSONWebKeySet;
}

/**
 * Fresh RS256 and ES256 key pairs with a signer and a verifier over them (the server's own
 * implementations keep keys in the database). The verifier checks the signature, `typ` and, unless
 * `ignoreExpiration`, `exp` against `clock`.
 */
export async function createTestKeys(clock: Clock): Promise<TestKeys> {
  // Key generation (RSA especially) is slow: one set of pairs per process is enough for tests.
  // The signer is the server's own `signCompactJws`, so every protocol test also exercises it.
  testKeyPairs ??= Promise.all(
    (['RS256', 'ES256'] as const).map(async (alg) => {
      const { privateKey, publicKey } = await generateTestKeyPair(alg);
      const kid = `test-${alg.toLowerCase()}`;
      const jwk = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' };
      return { signingKey: jwsSigningKey(alg, kid, privateKey), jwk };
    }),
  );
  const pairs = await testKeyPairs;
  const jwks: JSONWebKeySet = { keys: pairs.map((pair) => pair.jwk) };
  const keySet = createLocalJWKSet(jwks);
  const signer: TokenSigner = {
    async sign(claims, options) {
      const pair = pairs.find((candidate) => candidate.signingKey.alg === options.alg);
      if (pair === undefined) throw new Error(`no test key for ${options.alg}`);
      return signCompactJws(pair.signingKey, encodeJwsHeader(pair.signingKey, options.typ), claims);
    },
  };
  const verifier: TokenVerifier = {
    async verify(jwt, options) {
      const { payload: bytes, protectedHeader } = await compactVerify(jwt, keySet);
      if (options.typ !== undefined && protectedHeader.typ !== options.typ) throw new Error('unexpected typ');
      const payload = JSON.parse(new TextDecoder().decode(bytes)) as JWTPayload;
      if (
        !options.ignoreExpiration &&
        (typeof payload.exp !== 'number' || payload.exp <= clock.nowSeconds())
      ) {
        throw new Error('expired');
      }
      return payload;
    },
  };
  return { signer, verifier, jwks };
}
