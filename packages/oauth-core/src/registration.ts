import type { JWK } from 'jose';
import { clientAuthMethods, defaultAuthMethods, isPublicClient } from './client-auth-methods.js';
import {
  type Client,
  type ClientAuthenticationMethod,
  GRANT_TYPES,
  type GrantType,
  type SigningAlg,
  TOKEN_TYPES,
  type TokenTypeUri,
} from './model.js';

/**
 * Client registration: the one place for a client's defaults and for what makes a registration
 * unusable. The seed loader (and any later way of registering clients) reads its metadata with
 * `clientDefaults`, refuses it when `clientRegistrationProblems` names a problem, and stores the
 * record; this module knows nothing of files or databases.
 */

/**
 * RFC 9700 §2.4 (password) and §2.1.2 (implicit): deprecated grants this server never offers, with
 * the reason a registration asking for one is refused. The grant registry refuses to register them.
 */
export const FORBIDDEN_GRANT_TYPES: Readonly<Record<string, string>> = {
  password: 'the resource owner password credentials grant is not supported (RFC 9700 §2.4)',
  implicit: 'the implicit grant is not supported (RFC 9700 §2.1.2)',
};

/** The reason `grantType` is refused, or `undefined` when it is not a forbidden grant. */
export function forbiddenGrantReason(grantType: string): string | undefined {
  return Object.hasOwn(FORBIDDEN_GRANT_TYPES, grantType) ? FORBIDDEN_GRANT_TYPES[grantType] : undefined;
}

/**
 * A client's metadata under its RFC 7591 §2 names (with this server's extensions, README "Seed
 * file reference"): every member optional but `client_id`; `clientDefaults` fills the rest.
 */
export interface ClientMetadata {
  client_id: string;
  client_name?: string;
  redirect_uris?: readonly string[];
  post_logout_redirect_uris?: readonly string[];
  grant_types?: readonly GrantType[];
  scope?: string;
  skip_consent?: boolean;
  id_token_signed_response_alg?: SigningAlg;
  allowed_cors_origins?: readonly string[];
  backchannel_logout_uri?: string;
  frontchannel_logout_uri?: string;
  refresh_tokens_without_offline_access?: boolean;
  refresh_token_absolute_ttl?: number;
  refresh_token_sliding_ttl?: number;
  dpop_bound_access_tokens?: boolean;
  dpop_nonce_required?: boolean;
  require_pushed_authorization_requests?: boolean;
  token_exchange?: {
    audiences: readonly string[];
    scopes: readonly string[];
    subject_token_types?: readonly TokenTypeUri[];
  };
  keep_offline_access_on_logout?: boolean;
  require_mfa?: boolean;
  refresh_token_reuse_interval?: number;
  token_endpoint_auth_method?: ClientAuthenticationMethod;
  jwks?: { keys: readonly Record<string, unknown>[] };
  jwks_uri?: string;
  /** OIDC Registration §2: URLs of request objects the client hosts (RFC 9101 §5.2). */
  request_uris?: readonly string[];
  require_signed_request_object?: boolean;
  /** JARM client metadata: the algorithm of signed authorization responses. */
  authorization_signed_response_alg?: SigningAlg;
  /** Every authorization response is a signed JWT (JARM); see `securityDefaults` for the default. */
  require_signed_authorization_response?: boolean;
  /** OIDC Dynamic Client Registration §2: UserInfo answers a JWT signed with this algorithm. */
  userinfo_signed_response_alg?: SigningAlg;
  profile?: 'fapi2';
}

/** What the server holds beside the metadata. */
export interface ClientRegistrationContext {
  /** Keyed hash of the client's secret (secrets are stored hashed only); `null` without one. */
  secretHash: string | null;
  /** The server's refresh-token lifetimes (seconds), for metadata that names none. */
  lifetimes: Pick<Client, 'refreshTokenAbsoluteTtl' | 'refreshTokenSlidingTtl'>;
}

/** The client record `metadata` registers: every member it leaves out takes its default. */
export function clientDefaults(metadata: ClientMetadata, context: ClientRegistrationContext): Client {
  return {
    clientId: metadata.client_id,
    clientName: metadata.client_name ?? metadata.client_id,
    secretHash: context.secretHash,
    redirectUris: metadata.redirect_uris ?? [],
    postLogoutRedirectUris: metadata.post_logout_redirect_uris ?? [],
    // RFC 7591 §2: grant_types defaults to authorization_code.
    grantTypes: metadata.grant_types ?? [GRANT_TYPES.authorizationCode],
    scopes: (metadata.scope ?? 'openid').split(' ').filter((scope) => scope !== ''),
    skipConsent: metadata.skip_consent ?? false,
    allowedCorsOrigins: metadata.allowed_cors_origins ?? [],
    backchannelLogoutUri: metadata.backchannel_logout_uri ?? null,
    frontchannelLogoutUri: metadata.frontchannel_logout_uri ?? null,
    refreshTokensWithoutOfflineAccess: metadata.refresh_tokens_without_offline_access ?? false,
    refreshTokenAbsoluteTtl: metadata.refresh_token_absolute_ttl ?? context.lifetimes.refreshTokenAbsoluteTtl,
    refreshTokenSlidingTtl: metadata.refresh_token_sliding_ttl ?? context.lifetimes.refreshTokenSlidingTtl,
    dpopNonceRequired: metadata.dpop_nonce_required ?? false,
    tokenExchange: tokenExchangeDefaults(metadata.token_exchange),
    keepOfflineAccessOnLogout: metadata.keep_offline_access_on_logout ?? false,
    requireMfa: metadata.require_mfa ?? false,
    // 0: strict rotation, every reuse revokes the chain (RFC 9700 §4.14.2).
    refreshTokenReuseInterval: metadata.refresh_token_reuse_interval ?? 0,
    // OIDC Dynamic Client Registration §2: "If omitted, ... the Claims [are returned] as a UTF-8
    // encoded JSON object".
    userinfoSignedResponseAlg: metadata.userinfo_signed_response_alg ?? null,
    ...securityDefaults(metadata, context.secretHash !== null),
  };
}

function tokenExchangeDefaults(policy: ClientMetadata['token_exchange']): Client['tokenExchange'] {
  if (policy === undefined) return null;
  return {
    audiences: policy.audiences,
    scopes: policy.scopes,
    // Access tokens only unless the policy also names ID tokens.
    subjectTokenTypes: policy.subject_token_types ?? [TOKEN_TYPES.accessToken],
  };
}

/**
 * The authentication and profile members: the method is given, else `private_key_jwt` for `fapi2`,
 * else the one default rule (`defaultAuthMethods`); a `fapi2` client is DPoP-bound, PAR-only and
 * gets ES256 ID tokens and signed responses unless the metadata says otherwise (which
 * `clientRegistrationProblems` refuses). A `fapi2` client with `require_signed_request_object` is
 * a FAPI 2.0 Message Signing client: it signs its requests, so it receives signed authorization
 * responses too (Message Signing §5.4, JARM) unless `require_signed_authorization_response` says no.
 */
function securityDefaults(metadata: ClientMetadata, hasSecret: boolean) {
  const fapi2 = metadata.profile === 'fapi2';
  const explicit = metadata.token_endpoint_auth_method;
  return {
    authMethods:
      explicit !== undefined
        ? [explicit]
        : fapi2
          ? ['private_key_jwt' as const]
          : defaultAuthMethods(hasSecret),
    jwks: metadata.jwks === undefined ? null : { keys: metadata.jwks.keys as JWK[] },
    jwksUri: metadata.jwks_uri ?? null,
    requestUris: [...(metadata.request_uris ?? [])],
    requireSignedRequestObject: metadata.require_signed_request_object ?? false,
    profile: fapi2 ? ('fapi2' as const) : null,
    dpopBoundAccessTokens: metadata.dpop_bound_access_tokens ?? fapi2,
    requirePushedAuthorizationRequests: metadata.require_pushed_authorization_requests ?? fapi2,
    // OIDC Dynamic Client Registration §2: RS256 by default; FAPI 2.0 §5.4.1 forbids it.
    idTokenSigningAlg: metadata.id_token_signed_response_alg ?? (fapi2 ? 'ES256' : 'RS256'),
    // JARM client metadata: RS256 by default; likewise ES256 for FAPI 2.0.
    authorizationSignedResponseAlg: metadata.authorization_signed_response_alg ?? (fapi2 ? 'ES256' : 'RS256'),
    requireSignedAuthorizationResponse:
      metadata.require_signed_authorization_response ??
      (fapi2 && metadata.require_signed_request_object === true),
  } satisfies Partial<Client>;
}

/**
 * A problem that keeps a registration from being usable. `member` names the metadata member
 * (RFC 7591 / seed name, with a path below it such as `jwks.keys[0]`); without it the problem is
 * the combination of members.
 */
export interface RegistrationProblem {
  member?: string;
  problem: string;
}

/**
 * Everything wrong with a client record, in a fixed order (its keys and authentication, the FAPI 2.0
 * profile, its grants, its URIs, its token exchange policy, its CORS origins, its refresh-token reuse interval); empty when it can be
 * registered.
 */
export function clientRegistrationProblems(client: Client): RegistrationProblem[] {
  return [
    ...keyProblems(client),
    ...fapi2RegistrationProblems(client).map((found) => ({
      ...found,
      problem: `${found.problem} (profile fapi2)`,
    })),
    ...grantProblems(client),
    ...uriProblems(client),
    ...tokenExchangeProblems(client),
    ...corsProblems(client),
    ...reuseIntervalProblems(client),
  ];
}

/**
 * The longest `refresh_token_reuse_interval`: long enough for a retry after a lost answer or a
 * database failover, short enough that a stolen token replayed later still trips reuse detection
 * (RFC 9700 §4.14.2).
 */
export const MAX_REFRESH_TOKEN_REUSE_INTERVAL = 60;

function reuseIntervalProblems(client: Client): RegistrationProblem[] {
  const interval = client.refreshTokenReuseInterval ?? 0;
  if (Number.isInteger(interval) && interval >= 0 && interval <= MAX_REFRESH_TOKEN_REUSE_INTERVAL) return [];
  return [
    {
      member: 'refresh_token_reuse_interval',
      problem: `must be a whole number of seconds from 0 to ${MAX_REFRESH_TOKEN_REUSE_INTERVAL}`,
    },
  ];
}

/**
 * `token_endpoint_auth_method` against the credentials registered with it, and the keys themselves
 * (public only: RFC 7591 §2 "MUST NOT" hold private keys).
 */
function keyProblems(client: Client): RegistrationProblem[] {
  const problems: RegistrationProblem[] = [];
  const hasSecret = client.secretHash !== null;
  const jwks = client.jwks ?? null;
  const jwksUri = client.jwksUri ?? null;
  const method = clientAuthMethods(client)[0];
  if (jwks !== null && jwksUri !== null) {
    // RFC 7591 §2: "The jwks_uri and jwks parameters MUST NOT both be present".
    problems.push({ member: 'jwks', problem: 'give jwks or jwks_uri, not both' });
  }
  for (const [index, key] of (jwks?.keys ?? []).entries()) {
    const problem = publicJwkProblem(key as Record<string, unknown>);
    if (problem !== null) problems.push({ member: `jwks.keys[${index}]`, problem });
  }
  if (jwksUri !== null && !isAbsoluteUrlWithoutFragment(jwksUri)) {
    problems.push({ member: 'jwks_uri', problem: `"${jwksUri}" is not an absolute URI without a fragment` });
  }
  for (const requestUri of client.requestUris ?? []) {
    // OIDC Registration §2: request_uris are URLs; OIDC Core §6.2: the fragment only tells versions apart.
    if (!URL.canParse(requestUri) || !/^https?:$/.test(new URL(requestUri).protocol)) {
      problems.push({
        member: 'request_uris',
        problem: `"${requestUri.slice(0, 100)}" is not an http(s) URL`,
      });
    }
  }
  if ((method === 'client_secret_basic' || method === 'client_secret_post') && !hasSecret) {
    problems.push({ member: 'token_endpoint_auth_method', problem: `${method} needs a client_secret` });
  }
  if ((method === 'private_key_jwt' || method === 'none') && hasSecret) {
    problems.push({ member: 'client_secret', problem: `not used with token_endpoint_auth_method ${method}` });
  }
  if (
    (method === 'private_key_jwt' || client.requireSignedRequestObject === true) &&
    jwks === null &&
    jwksUri === null
  ) {
    problems.push({
      member: 'jwks',
      problem: 'jwks or jwks_uri is required for private_key_jwt and signed request objects',
    });
  }
  return problems;
}

/** RFC 7517 / RFC 7518 §6: members only a private or symmetric key has. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function publicJwkProblem(key: Record<string, unknown>): string | null {
  if (!['RSA', 'EC', 'OKP'].includes(String(key.kty)))
    return 'kty must be RSA, EC or OKP (an asymmetric public key)';
  if (PRIVATE_JWK_MEMBERS.some((member) => member in key)) {
    return 'holds private key material; register the public key only';
  }
  return null;
}

function grantProblems(client: Client): RegistrationProblem[] {
  const problems: RegistrationProblem[] = [];
  if (isPublicClient(client) && client.grantTypes.includes(GRANT_TYPES.clientCredentials)) {
    // RFC 6749 §4.4: the client credentials grant MUST only be used by confidential clients.
    problems.push({
      problem: 'client_credentials requires a client that authenticates (public clients cannot use it)',
    });
  }
  if (client.grantTypes.includes(GRANT_TYPES.authorizationCode) && client.redirectUris.length === 0) {
    problems.push({ problem: 'redirect_uris is required for the authorization_code grant' });
  }
  return problems;
}

function uriProblems(client: Client): RegistrationProblem[] {
  const notAbsolute = (member: string, uri: string): RegistrationProblem => ({
    member,
    problem: `"${uri}" is not an absolute URI without a fragment`,
  });
  const problems: RegistrationProblem[] = [];
  // RFC 6749 §3.1.2: redirection endpoints are absolute URIs without a fragment.
  for (const uri of client.redirectUris) {
    if (!isAbsoluteUrlWithoutFragment(uri)) problems.push(notAbsolute('redirect_uris', uri));
  }
  for (const uri of client.postLogoutRedirectUris) {
    if (!isAbsoluteUrlWithoutFragment(uri)) problems.push(notAbsolute('post_logout_redirect_uris', uri));
  }
  for (const [member, uri] of [
    ['backchannel_logout_uri', client.backchannelLogoutUri],
    ['frontchannel_logout_uri', client.frontchannelLogoutUri],
  ] as const) {
    if (uri !== null && !isAbsoluteUrlWithoutFragment(uri)) problems.push(notAbsolute(member, uri));
  }
  return problems;
}

function tokenExchangeProblems(client: Client): RegistrationProblem[] {
  const problems: RegistrationProblem[] = [];
  const exchanges = client.grantTypes.includes(GRANT_TYPES.tokenExchange);
  const hasPolicy = (client.tokenExchange ?? null) !== null;
  if (exchanges && !hasPolicy)
    problems.push({ problem: 'the token-exchange grant needs a token_exchange policy' });
  if (!exchanges && hasPolicy) {
    problems.push({ problem: 'token_exchange is set but grant_types lacks the token-exchange grant' });
  }
  // RFC 8693 §5: exchanging tokens is a privileged act; only a client that authenticates may do it.
  if (exchanges && isPublicClient(client)) {
    problems.push({ problem: 'token exchange requires a client that authenticates' });
  }
  return problems;
}

/** Fetch §3.2.5: `Access-Control-Allow-Origin` names an origin, which is all a CORS entry may be. */
function corsProblems(client: Client): RegistrationProblem[] {
  return client.allowedCorsOrigins
    .filter((origin) => !URL.canParse(origin) || new URL(origin).origin !== origin)
    .map((origin) => ({
      member: 'allowed_cors_origins',
      problem: `"${origin}" is not an origin (scheme://host[:port])`,
    }));
}

function isAbsoluteUrlWithoutFragment(value: string): boolean {
  return URL.canParse(value) && !value.includes('#');
}

/**
 * What keeps a `fapi2` client from meeting the FAPI 2.0 Security Profile (fapi2.ts lists where each
 * of its rules acts); empty for other clients and for a registration that meets it.
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
  | 'authorizationSignedResponseAlg'
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
  if (client.authorizationSignedResponseAlg === 'RS256') {
    problems.push({
      member: 'authorization_signed_response_alg',
      problem: 'RS256 is not allowed (FAPI 2.0 §5.4.1)',
    });
  }
  const unsuitable = client.grantTypes.filter((grant) => !FAPI2_GRANT_TYPES.includes(grant));
  if (unsuitable.length > 0) {
    problems.push({
      member: 'grant_types',
      problem: `${unsuitable.join(', ')} is outside the FAPI 2.0 profile`,
    });
  }
  return problems;
}

/** The grants a FAPI 2.0 client may hold: the code flow, its refresh tokens, and client credentials. */
const FAPI2_GRANT_TYPES: readonly GrantType[] = [
  GRANT_TYPES.authorizationCode,
  GRANT_TYPES.refreshToken,
  GRANT_TYPES.clientCredentials,
];
