import type { Client } from './model.js';

/**
 * The FAPI 2.0 Security Profile (OpenID Foundation, final), per client (`profile: "fapi2"`). The
 * rules that act on requests live where the request is handled and call into here or read
 * `client.profile`:
 * - PAR required (§5.3.2.2 item 2): `requirePushedAuthorizationRequests`, forced on at registration;
 * - `response_type=code` with PKCE S256 (§5.3.2.2 items 1, 4): `validateAuthorizationRequest`;
 * - sender-constrained access tokens (§5.3.2.1 item 4): DPoP, `dpopBoundAccessTokens` forced on;
 * - `private_key_jwt` only (§5.3.2.1 item 5): the registered method, checked by `authenticateClient`;
 * - the issuer as the only assertion `aud` (§5.3.2.1 item 8): `checkClientAssertionClaims`;
 * - codes valid at most 60 s (§5.3.2.1 item 7): `authorizationCodeTtlFor`;
 * - PS256, ES256 or EdDSA only (§5.4.1): `clientJwtSigningAlgs`, and ES256 ID tokens;
 * - `iss` in every authorization response (§5.3.2.2 item 7, RFC 9207): always sent by this server.
 * And from FAPI 2.0 Message Signing (final):
 * - request objects with `nbf` at most 60 min old and `exp - nbf` at most 60 min (§5.3.1 items 3
 *   and 4): `fapi2RequestObjectTimeProblem`, called by `checkRequestObjectClaims`.
 * `fapi2RegistrationProblems` (registration.ts) refuses a registration that cannot meet them.
 */

/** FAPI 2.0 Security Profile §5.3.2.1: "shall issue authorization codes with a maximum lifetime of 60 seconds". */
export const FAPI2_MAX_AUTHORIZATION_CODE_TTL_SECONDS = 60;

/** The lifetime of an authorization code issued to `client` (seconds). */
export function authorizationCodeTtlFor(client: Pick<Client, 'profile'>, configuredTtl: number): number {
  return client.profile === 'fapi2'
    ? Math.min(configuredTtl, FAPI2_MAX_AUTHORIZATION_CODE_TTL_SECONDS)
    : configuredTtl;
}

/** FAPI 2.0 Message Signing §5.3.1: the 60 minutes bounding a request object's `nbf` and lifetime. */
export const FAPI2_MAX_REQUEST_OBJECT_AGE_SECONDS = 3600;

/**
 * FAPI 2.0 Message Signing §5.3.1, for a request object of a `fapi2` client: "shall require the
 * request object to contain an nbf claim that is no longer than 60 minutes in the past" (item 3)
 * and "an exp claim that has a lifetime of no longer than 60 minutes after the nbf claim" (item 4).
 * Returns what is wrong (a private detail), or `null`.
 */
export function fapi2RequestObjectTimeProblem(
  claims: { nbf?: unknown; exp: number },
  now: number,
): string | null {
  const { nbf, exp } = claims;
  if (typeof nbf !== 'number') return 'nbf missing (FAPI 2.0 Message Signing §5.3.1)';
  if (nbf < now - FAPI2_MAX_REQUEST_OBJECT_AGE_SECONDS) return 'nbf more than 60 minutes in the past';
  if (exp - nbf > FAPI2_MAX_REQUEST_OBJECT_AGE_SECONDS) return 'exp more than 60 minutes after nbf';
  return null;
}
