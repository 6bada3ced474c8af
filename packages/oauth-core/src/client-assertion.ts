import type { JWTPayload } from 'jose';
import { type ClientKeySource, verifyClientSignedJwt } from './client-signed-jwt.js';
import { JWT_CLOCK_SKEW_SECONDS } from './clock-skew.js';
import { invalidClient } from './errors.js';
import type { Client } from './model.js';
import type { Clock } from './runtime.js';
import type { JtiReplayStore } from './storage/dpop-replay.js';
import { hashToken } from './tokens/opaque.js';

export type { ClientKeySource } from './client-signed-jwt.js';

/**
 * `private_key_jwt` client authentication (RFC 7523 §2.2 and §3, OIDC Core §9): the client signs a
 * short-lived JWT about itself with a key it registered, and sends it as `client_assertion`.
 */

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT bearer client assertion. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** How far ahead `exp` may be: a short-lived assertion limits what a captured one is worth. */
export const MAX_CLIENT_ASSERTION_LIFETIME_SECONDS = 300;
const MAX_ASSERTION_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;

export interface ClientAssertionClaimCheck {
  clientId: string;
  /** The issuer identifier: always an accepted `aud`. */
  issuer: string;
  /** The URL of the endpoint receiving the assertion: also accepted, except for FAPI 2.0 clients. */
  endpointUrl: string;
  fapi2: boolean;
  now: number;
}

/**
 * The claim checks of RFC 7523 §3, pure. Returns the `jti` and `exp` for the replay check.
 * - item 1/2: `iss` and `sub` are the client_id (OIDC Core §9).
 * - item 3: `aud` identifies this server: the issuer, or the endpoint URL. FAPI 2.0 Security Profile
 *   §5.3.2.1: "shall only accept its issuer identifier value … as a string in the aud claim".
 * - item 4: `exp` is present and not passed; here also at most five minutes ahead.
 * - item 5/6: `nbf`/`iat`, when present, are at most `JWT_CLOCK_SKEW_SECONDS` ahead (FAPI 2.0 SP
 *   §5.3.2.1: up to 10 s ahead accepted).
 * - item 7: `jti` is present (single use is the caller's replay check).
 */
export function checkClientAssertionClaims(
  payload: JWTPayload,
  check: ClientAssertionClaimCheck,
): { jti: string; exp: number } {
  const skew = JWT_CLOCK_SKEW_SECONDS;
  if (payload.iss !== check.clientId) throw invalidClient('assertion iss is not the client_id');
  if (payload.sub !== check.clientId) throw invalidClient('assertion sub is not the client_id');
  if (!audienceAccepted(payload.aud, check)) throw invalidClient('assertion aud is not accepted');
  const { exp, nbf, iat, jti } = payload;
  if (typeof exp !== 'number') throw invalidClient('assertion without exp');
  if (exp <= check.now - skew) throw invalidClient('assertion expired');
  if (exp > check.now + MAX_CLIENT_ASSERTION_LIFETIME_SECONDS + skew) {
    throw invalidClient('assertion exp too far ahead');
  }
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > check.now + skew)) {
    throw invalidClient('assertion not yet valid');
  }
  if (iat !== undefined && (typeof iat !== 'number' || iat > check.now + skew)) {
    throw invalidClient('assertion issued in the future');
  }
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) {
    throw invalidClient('assertion without a usable jti');
  }
  return { jti, exp };
}

function audienceAccepted(aud: JWTPayload['aud'], check: ClientAssertionClaimCheck): boolean {
  if (check.fapi2) return aud === check.issuer;
  const accepted = [check.issuer, check.endpointUrl];
  const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  return values.some((value) => accepted.includes(value));
}

export interface ClientAssertionDeps {
  keys: ClientKeySource;
  /** `null` only where the assertion is inspected without being used (rate-limit keys). */
  replay: JtiReplayStore | null;
  issuer: string;
  clock: Clock;
}

/**
 * Verifies `assertion` for `client` arriving at `endpointUrl`: an asymmetric algorithm from the
 * client's allow-list, a signature by one of the client's keys, the claims above, then single use
 * across every instance until `exp` (RFC 7523 §3 item 7: "the authorization server MAY ensure that
 * JWTs are not replayed"; this server always does). Every failure is `invalid_client`.
 */
export async function verifyClientAssertion(
  assertion: string,
  client: Client,
  endpointUrl: string,
  deps: ClientAssertionDeps,
): Promise<void> {
  const { payload, now } = await verifyClientSignedJwt(assertion, client, deps, {
    maxLength: MAX_ASSERTION_LENGTH,
    clockSkewSeconds: JWT_CLOCK_SKEW_SECONDS,
    fail: (detail) => invalidClient(`assertion: ${detail}`),
  });
  const { jti, exp } = checkClientAssertionClaims(payload, {
    clientId: client.clientId,
    issuer: deps.issuer,
    endpointUrl,
    fapi2: client.profile === 'fapi2',
    now,
  });
  if (deps.replay === null) return;
  const key = hashToken(`client_assertion:${client.clientId}:${jti}`);
  if (!(await deps.replay.markUsed(key, exp + JWT_CLOCK_SKEW_SECONDS))) {
    throw invalidClient('assertion jti already used');
  }
}
