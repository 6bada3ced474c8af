import { type KeyObject, sign } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { SigningAlg } from '../model.js';
import type { JwtType } from './signer.js';

/**
 * The one place the server's own JWTs are signed (access tokens, ID tokens, logout tokens, JWT
 * introspection responses, JARM responses): a compact JWS (RFC 7515 §7.1) made with node:crypto's
 * one-shot synchronous `sign` on a KeyObject. jose's `SignJWT` makes the same bytes but goes through
 * WebCrypto, which costs several times the signature itself for ES256; jose still verifies every JWT
 * that comes from outside.
 */

/** A private key checked once against the algorithm it signs for (see `jwsSigningKey`). */
export interface JwsSigningKey {
  readonly alg: SigningAlg;
  readonly kid: string;
  readonly privateKey: KeyObject;
}

interface NodeSignature {
  digest: 'sha256';
  keyType: 'rsa' | 'ec';
  /** For `ec` keys: the curve the algorithm names (OpenSSL's name for P-256). */
  namedCurve?: 'prime256v1';
  /** For `rsa` keys: the smallest modulus the algorithm allows, in bits. */
  minimumModulusLength?: number;
  /** For ECDSA: JWS wants R‖S as fixed-size big-endian integers, not node's default DER. */
  dsaEncoding?: 'ieee-p1363';
}

/**
 * How node:crypto makes each algorithm this server publishes. A `Record` over `SigningAlg`: an
 * algorithm added to the type (PS256, EdDSA) does not compile until it has its row here.
 */
const NODE_SIGNATURE_BY_ALG: Record<SigningAlg, NodeSignature> = {
  // RFC 7518 §3.3: RSASSA-PKCS1-v1_5 using SHA-256; "A key of size 2048 bits or larger MUST be used".
  RS256: { digest: 'sha256', keyType: 'rsa', minimumModulusLength: 2048 },
  // RFC 7518 §3.4: ECDSA P-256 SHA-256; the signature is "the concatenation of the two integers R and
  // S", 32 octets each (IEEE P1363), where node would write an ASN.1 DER sequence by default.
  ES256: { digest: 'sha256', keyType: 'ec', namedCurve: 'prime256v1', dsaEncoding: 'ieee-p1363' },
};

/** Every algorithm `signCompactJws` can make, in the table's order. */
export const COMPACT_JWS_ALGS = Object.keys(NODE_SIGNATURE_BY_ALG) as SigningAlg[];

/** Pairs a private key with its `alg` and `kid`; throws when the key cannot make that algorithm. */
export function jwsSigningKey(alg: SigningAlg, kid: string, privateKey: KeyObject): JwsSigningKey {
  const expected = NODE_SIGNATURE_BY_ALG[alg];
  const details = privateKey.asymmetricKeyDetails ?? {};
  const fits =
    privateKey.type === 'private' &&
    privateKey.asymmetricKeyType === expected.keyType &&
    (expected.namedCurve === undefined || details.namedCurve === expected.namedCurve) &&
    (expected.minimumModulusLength === undefined ||
      (details.modulusLength ?? 0) >= expected.minimumModulusLength);
  if (!fits) throw new TypeError(`key ${kid} cannot sign ${alg}`);
  return { alg, kid, privateKey };
}

/** BASE64URL(UTF8(JWS Protected Header)) for `{alg, kid, typ}`: constant per key and type, so cacheable. */
export function encodeJwsHeader(key: JwsSigningKey, typ: JwtType): string {
  return base64url(JSON.stringify({ alg: key.alg, kid: key.kid, typ }));
}

/** `header.payload.signature`, the claims serialized as given (RFC 7519 §7.1). */
export function signCompactJws(key: JwsSigningKey, encodedHeader: string, claims: JWTPayload): string {
  const signingInput = `${encodedHeader}.${base64url(JSON.stringify(claims))}`;
  const { digest, dsaEncoding } = NODE_SIGNATURE_BY_ALG[key.alg];
  const signature = sign(
    digest,
    Buffer.from(signingInput),
    dsaEncoding === undefined ? key.privateKey : { key: key.privateKey, dsaEncoding },
  );
  return `${signingInput}.${signature.toString('base64url')}`;
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
