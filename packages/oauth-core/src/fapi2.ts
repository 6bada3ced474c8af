import { clientAuthMethods } from './client-auth-methods.js';
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
 * `fapi2RegistrationProblems` refuses a registration that cannot meet them.
 */

/** FAPI 2.0 Security Profile §5.3.2.1: "shall issue authorization codes with a maximum lifetime of 60 seconds". */
export const FAPI2_MAX_AUTHORIZATION_CODE_TTL_SECONDS = 60;

/** The lifetime of an authorization code issued to `client` (seconds). */
export function authorizationCodeTtlFor(client: Pick<Client, 'profile'>, configuredTtl: number): number {
  return client.profile === 'fapi2'
    ? Math.min(configuredTtl, FAPI2_MAX_AUTHORIZATION_CODE_TTL_SECONDS)
    : configuredTtl;
}

/** A registration member (RFC 7591 / seed name) that keeps a client from meeting the profile. */
export interface RegistrationProblem {
  member: string;
  problem: string;
}

/**
 * What keeps a registered `fapi2` client from meeting the profile; empty when it can. Member names
 * are those of the seed file (RFC 7591 metadata names).
 */
export type Fapi2Registration = Pick<
  Client,
  | 'secretHash'
  | 'authMethods'
  | 'jwks'
  | 'jwksUri'
  | 'requirePushedAuthorizationRequests'
  | 'dpopBoundAccessTokens'
  | 'idTokenSigningAlg'
  | 'grantTypes'
  | 'profile'
>;

export function fapi2RegistrationProblems(client: Fapi2Registration): RegistrationProblem[] {
  if (client.profile !== 'fapi2') return [];
  const problems: RegistrationProblem[] = [];
  const methods = clientAuthMethods(client);
  if (methods.length !== 1 || methods[0] !== 'private_key_jwt') {
    problems.push({
      member: 'token_endpoint_auth_method',
      problem: 'must be private_key_jwt (FAPI 2.0 §5.3.2.1)',
    });
  }
  if (client.secretHash !== null) {
    problems.push({ member: 'client_secret', problem: 'a FAPI 2.0 client authenticates with its keys only' });
  }
  if ((client.jwks?.keys.length ?? 0) === 0 && (client.jwksUri ?? null) === null) {
    problems.push({ member: 'jwks', problem: 'jwks or jwks_uri is required for private_key_jwt' });
  }
  if (client.requirePushedAuthorizationRequests !== true) {
    problems.push({
      member: 'require_pushed_authorization_requests',
      problem: 'PAR is required (FAPI 2.0 §5.3.2.2)',
    });
  }
  if (client.dpopBoundAccessTokens !== true) {
    problems.push({
      member: 'dpop_bound_access_tokens',
      problem: 'access tokens must be sender-constrained (FAPI 2.0 §5.3.2.1)',
    });
  }
  if (client.idTokenSigningAlg === 'RS256') {
    problems.push({
      member: 'id_token_signed_response_alg',
      problem: 'RS256 is not allowed (FAPI 2.0 §5.4.1)',
    });
  }
  const unsuitable = client.grantTypes.filter(
    (grant) => grant !== 'authorization_code' && grant !== 'refresh_token' && grant !== 'client_credentials',
  );
  if (unsuitable.length > 0) {
    problems.push({
      member: 'grant_types',
      problem: `${unsuitable.join(', ')} is outside the FAPI 2.0 profile`,
    });
  }
  return problems;
}
