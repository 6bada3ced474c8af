import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
  type ProtectedHeaderParameters,
} from 'jose';
import { authenticationChallenge } from './challenge.js';
import { JWT_CLOCK_SKEW_SECONDS } from './clock-skew.js';
import type { DpopNonces } from './dpop-nonce.js';
import { OAuthError } from './errors.js';
import type { DpopReplayStore } from './storage/dpop-replay.js';
import { hashToken } from './tokens/opaque.js';

/**
 * RFC 9449 (DPoP): proof-of-possession of a key pair held by the client, sent as a signed JWT in
 * the `DPoP` header of each request. The token endpoint binds the tokens it issues to that key
 * (`cnf.jkt`); a resource (UserInfo) then accepts a bound token only with a fresh proof by the
 * same key that also hashes the token (`ath`).
 */

/**
 * Asymmetric algorithms accepted in proofs (`dpop_signing_alg_values_supported`). `Ed25519` is the
 * fully-specified name of EdDSA over Ed25519 (RFC 9864), which current clients (oauth4webapi) send.
 */
export const DPOP_SIGNING_ALGS: readonly string[] = ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];

/** How old a proof's `iat` may be, seconds (RFC 9449 §11.1: "a relatively short time"). */
export const DEFAULT_DPOP_MAX_AGE_SECONDS = 60;

/** RFC 7517 / RFC 7518 §6: members that only a private (or symmetric) key has. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
/** A proof is small; a huge header value is refused before any parsing. */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;

export interface DpopProofCheck {
  /** The HTTP method of the request carrying the proof (`htm`). */
  method: string;
  /**
   * The URL of the endpoint as this server publishes it (built from the issuer, never from the
   * `Host` header). Compared with `htu` without query and fragment (RFC 9449 §4.3 step 9).
   */
  url: string;
  /** At a resource: the access token the proof must hash in `ath` (RFC 9449 §4.3 step 12). */
  accessToken?: string;
  /**
   * When given, the proof must carry a nonce this source accepts (RFC 9449 §8); otherwise the
   * result is `use_dpop_nonce` with the current nonce in a `DPoP-Nonce` header.
   */
  nonces?: DpopNonces | null;
  /** Our clock, whole seconds. */
  now: number;
  maxAgeSeconds?: number;
  allowedAlgs?: readonly string[];
}

export interface VerifiedDpopProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's public key: what tokens are bound to. */
  jkt: string;
  jti: string;
  iat: number;
  /** The public key from the proof's header. */
  jwk: JWK;
}

/** RFC 9449 §5 / §7.1: the proof is missing, malformed or does not verify (400 at the token endpoint). */
export const invalidDpopProof = (detail?: string) =>
  new OAuthError('invalid_dpop_proof', { description: 'the DPoP proof is invalid', detail });

/**
 * RFC 9449 §8: the proof must carry the server's nonce. The current nonce travels in the
 * `DPoP-Nonce` header of the error response, so the client can retry at once.
 */
export const useDpopNonce = (nonce: string, detail?: string) =>
  new OAuthError('use_dpop_nonce', {
    description: 'the DPoP proof must carry the nonce the server supplied',
    detail,
    headers: { 'DPoP-Nonce': nonce },
  });

/** RFC 9449 §4.2 `ath`: base64url of the SHA-256 of the ASCII access token. */
export function computeAccessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/** `htu` and the request URL compared without query and fragment, after URL normalisation (RFC 3986 §6.2.2–6.2.3). */
function withoutQueryAndFragment(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  url.search = '';
  url.hash = '';
  return url.href;
}

function decodeHeader(proof: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(proof);
  } catch {
    throw invalidDpopProof('proof is not a JWS');
  }
}

/**
 * Verifies a DPoP proof (RFC 9449 §4.3) and returns the key's thumbprint. In order: a single
 * well-formed JWT; header `typ: dpop+jwt`, an allowed asymmetric `alg`, a public `jwk` (a private
 * member anywhere fails); the signature by that key; `jti`, `htm`, `htu`, `iat` present;
 * `htm` = the method; `htu` = the URL (query and fragment ignored); the nonce when one is required;
 * `iat` neither older than `maxAgeSeconds` nor further ahead than the skew; `ath` when an access
 * token is presented. Only a proof that passes all of that is recorded in `replay`, and a `jti`
 * recorded before fails (§11.1), so a rejected proof never burns its `jti`.
 *
 * Errors: `invalid_dpop_proof` (400), or `use_dpop_nonce` (400, `DPoP-Nonce` header). Resources
 * turn them into 401 challenges (`asResourceChallenge`).
 */
export async function verifyDpopProof(
  proof: string,
  check: DpopProofCheck,
  replay: DpopReplayStore,
): Promise<VerifiedDpopProof> {
  const allowedAlgs = check.allowedAlgs ?? DPOP_SIGNING_ALGS;
  const maxAge = check.maxAgeSeconds ?? DEFAULT_DPOP_MAX_AGE_SECONDS;
  if (proof.length === 0 || proof.length > MAX_PROOF_LENGTH)
    throw invalidDpopProof('proof empty or too long');

  const jwk = publicKeyFromHeader(decodeHeader(proof), allowedAlgs);
  const claims = requiredClaims(await verifiedPayload(proof, allowedAlgs, check.now));
  checkRequestBinding(claims, check);
  checkNonce(claims.nonce, check.nonces);
  checkIssuedAt(claims.iat, check.now, maxAge);
  // §4.3 step 12: at a resource, the proof is bound to the presented access token.
  if (check.accessToken !== undefined) checkAccessTokenHash(claims.ath, check.accessToken);

  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  await recordFirstUse(replay, { jkt, jti: claims.jti, iat: claims.iat, maxAge });
  return { jkt, jti: claims.jti, iat: claims.iat, jwk };
}

/** The header's public key, after the checks on `typ`, `alg` and `jwk` (RFC 9449 §4.3 steps 4–7). */
function publicKeyFromHeader(header: ProtectedHeaderParameters, allowedAlgs: readonly string[]): JWK {
  // §4.2: "typ: dpop+jwt" (explicit typing, so no other JWT can pass as a proof).
  if (header.typ !== 'dpop+jwt') throw invalidDpopProof('typ is not dpop+jwt');
  // §4.3 step 5: an asymmetric algorithm this server supports ("none" and MACs never are).
  if (typeof header.alg !== 'string' || !allowedAlgs.includes(header.alg)) {
    throw invalidDpopProof(`unsupported alg ${String(header.alg).slice(0, 20)}`);
  }
  const jwk = header.jwk;
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw invalidDpopProof('no jwk header');
  // §4.3 step 7: "the jwk JOSE Header Parameter does not contain a private key".
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) throw invalidDpopProof('jwk has private members');
  return jwk as JWK;
}

/** The payload, once the signature by the embedded key verifies (§4.3 step 6). */
async function verifiedPayload(
  proof: string,
  allowedAlgs: readonly string[],
  now: number,
): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: [...allowedAlgs],
      // jose checks `exp`/`nbf` when present; our clock, not the process clock.
      currentDate: new Date(now * 1000),
      clockTolerance: JWT_CLOCK_SKEW_SECONDS,
    });
    return payload;
  } catch (error) {
    throw invalidDpopProof(`signature or structure: ${(error as Error).message}`);
  }
}

interface ProofClaims {
  jti: string;
  iat: number;
  htm: string;
  htu: string;
  ath: unknown;
  nonce: unknown;
}

/** §4.2: `jti`, `htm`, `htu` and `iat` are required; `ath` and `nonce` are checked when needed. */
function requiredClaims(payload: JWTPayload): ProofClaims {
  const { jti, iat } = payload;
  const { htm, htu, ath, nonce } = payload as {
    htm?: unknown;
    htu?: unknown;
    ath?: unknown;
    nonce?: unknown;
  };
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
    throw invalidDpopProof('jti missing or malformed');
  }
  if (typeof htm !== 'string' || typeof htu !== 'string' || typeof iat !== 'number') {
    throw invalidDpopProof('htm, htu or iat missing');
  }
  return { jti, iat, htm, htu, ath, nonce };
}

function checkRequestBinding(claims: ProofClaims, check: DpopProofCheck): void {
  // §4.3 step 8: the method of the request.
  if (claims.htm !== check.method) throw invalidDpopProof('htm does not match the request method');
  // §4.3 step 9: the URI of the request, "ignoring any query and fragment parts".
  const expectedUrl = withoutQueryAndFragment(check.url);
  if (expectedUrl === null || withoutQueryAndFragment(claims.htu) !== expectedUrl) {
    throw invalidDpopProof('htu does not match the request URL');
  }
}

/**
 * §4.3 step 10 / §8: the server-provided nonce, checked before the age, so that a client whose
 * clock is off still learns the nonce it must use.
 */
function checkNonce(nonce: unknown, nonces: DpopProofCheck['nonces']): void {
  if (!nonces) return;
  if (typeof nonce !== 'string' || !nonces.isValid(nonce)) {
    throw useDpopNonce(nonces.current(), nonce === undefined ? 'nonce missing' : 'nonce stale or unknown');
  }
}

function checkIssuedAt(iat: number, now: number, maxAge: number): void {
  // §4.3 step 11: "the creation time of the JWT ... is within an acceptable window".
  // FAPI 2.0 SP §5.3.2.1: up to JWT_CLOCK_SKEW_SECONDS ahead is a client clock, not a forgery.
  if (iat > now + JWT_CLOCK_SKEW_SECONDS) throw invalidDpopProof('iat in the future');
  if (iat < now - maxAge) throw invalidDpopProof('iat too old');
}

function checkAccessTokenHash(ath: unknown, accessToken: string): void {
  if (typeof ath !== 'string' || ath !== computeAccessTokenHash(accessToken)) {
    throw invalidDpopProof('ath does not match the access token');
  }
}

/**
 * §11.1: a jti seen within the window is a replay. Scoped by key, so no client can make another
 * client's jti values "used" first; hashed, so the stored key has a fixed size.
 */
async function recordFirstUse(
  replay: DpopReplayStore,
  proof: { jkt: string; jti: string; iat: number; maxAge: number },
): Promise<void> {
  if (!(await replay.markUsed(hashToken(`${proof.jkt}.${proof.jti}`), proof.iat + proof.maxAge + 1))) {
    throw invalidDpopProof('jti already used (replay)');
  }
}

/**
 * RFC 9449 §7.1 / §9: at a protected resource, DPoP errors are 401 with a `WWW-Authenticate: DPoP`
 * challenge naming the error and the accepted algorithms (the nonce error keeps its `DPoP-Nonce`).
 */
export function asResourceChallenge(
  error: OAuthError,
  allowedAlgs: readonly string[] = DPOP_SIGNING_ALGS,
): OAuthError {
  const parameters: Array<[string, string | undefined]> = [
    ['error', error.code],
    ['error_description', error.description ?? error.code],
  ];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(error.headers)) {
    if (name.toLowerCase() !== 'www-authenticate') headers[name] = value;
    // insufficient_scope names the scope it lacks (RFC 6750 §3); keep that in the DPoP challenge.
    // Scope tokens never contain `"` or `\` (RFC 6749 §3.3), so the quoted value reads back as is.
    else parameters.push(['scope', /scope="([^"]*)"/.exec(value)?.[1]]);
  }
  parameters.push(['algs', allowedAlgs.join(' ')]);
  const challenge = authenticationChallenge('DPoP', parameters);
  const status = error.code === 'insufficient_scope' ? 403 : 401;
  headers['WWW-Authenticate'] = challenge;
  return new OAuthError(error.code, {
    description: error.description,
    detail: error.detail,
    status,
    headers,
  });
}
