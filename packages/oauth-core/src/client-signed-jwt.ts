import { decodeProtectedHeader, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { clientJwtSigningAlgs } from './client-auth-methods.js';
import type { OAuthError } from './errors.js';
import type { Client } from './model.js';
import type { Clock } from './runtime.js';

/** Where a client's public keys come from (inline `jwks`, or `jwks_uri` fetched and cached by the app). */
export interface ClientKeySource {
  /** A jose key resolver for this client's keys; throws when the client registered none. */
  keysFor(client: Client): JWTVerifyGetKey;
}

/**
 * The signature step shared by client assertions (RFC 7523) and request objects (RFC 9101): a JWS
 * (not encrypted, not `none`) with an asymmetric algorithm the client may use, signed by one of the
 * client's registered keys. jose also checks `exp`/`nbf` against our clock; the claim rules are
 * the caller's. Every failure is `fail(detail)`.
 */
export async function verifyClientSignedJwt(
  jwt: string,
  client: Client,
  deps: { keys: ClientKeySource; clock: Clock },
  options: { maxLength: number; clockSkewSeconds: number; fail: (detail: string) => OAuthError },
): Promise<{ payload: JWTPayload; now: number }> {
  const { fail } = options;
  if (jwt.length > options.maxLength) throw fail('too large');
  const algorithms = [...clientJwtSigningAlgs(client)];
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(jwt).alg;
  } catch {
    throw fail('not a JWS');
  }
  if (alg === undefined || !algorithms.includes(alg))
    throw fail(`alg ${String(alg).slice(0, 20)} not allowed`);
  const now = deps.clock.nowSeconds();
  try {
    const { payload } = await jwtVerify(jwt, deps.keys.keysFor(client), {
      algorithms,
      currentDate: new Date(now * 1000),
      clockTolerance: options.clockSkewSeconds,
    });
    return { payload, now };
  } catch (error) {
    throw fail(`rejected: ${(error as { code?: string }).code ?? 'invalid'}`);
  }
}
