/**
 * The protocol's records. Times are whole seconds since the epoch (JWT NumericDate).
 * Tokens and codes are never stored in clear: `*Hash` fields hold `hashToken(value)`.
 */

import type { JWK } from 'jose';

export const GRANT_TYPES = {
  authorizationCode: 'authorization_code',
  refreshToken: 'refresh_token',
  clientCredentials: 'client_credentials',
  deviceCode: 'urn:ietf:params:oauth:grant-type:device_code',
  tokenExchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
} as const;
export type GrantType = (typeof GRANT_TYPES)[keyof typeof GRANT_TYPES];

/** Algorithms this server signs with. RS256 is mandatory for OIDC Discovery §3. */
export type SigningAlg = 'RS256' | 'ES256';

/**
 * OAuth Dynamic Client Registration (RFC 7591 §2) `token_endpoint_auth_method` values offered;
 * where each is accepted is the table in client-auth-methods.ts.
 */
export type ClientAuthenticationMethod =
  | 'client_secret_basic'
  | 'client_secret_post'
  | 'private_key_jwt'
  | 'none';

export interface Client {
  clientId: string;
  /** Shown on consent and device pages. Defaults to the client_id. */
  clientName: string;
  /** Keyed hash of the secret; `null` marks a public client (PKCE required). */
  secretHash: string | null;
  /** Exact strings; RFC 9700 §4.1.3 requires exact matching. */
  redirectUris: readonly string[];
  postLogoutRedirectUris: readonly string[];
  grantTypes: readonly GrantType[];
  /** Scopes the client may be granted. */
  scopes: readonly string[];
  skipConsent: boolean;
  idTokenSigningAlg: SigningAlg;
  /** Browser origins allowed to call token, userinfo and revocation (CORS). */
  allowedCorsOrigins: readonly string[];
  backchannelLogoutUri: string | null;
  frontchannelLogoutUri: string | null;
  /** Issue refresh tokens even when `offline_access` was not granted. */
  refreshTokensWithoutOfflineAccess: boolean;
  /** Seconds from the grant's start after which no refresh token of it is valid. */
  refreshTokenAbsoluteTtl: number;
  /** Seconds a refresh token stays valid after it was issued (sliding window). */
  refreshTokenSlidingTtl: number;
  // Optional members: absent means `false` (or `null` for the policy), so records written before
  // they existed stay valid.
  /** RFC 9449 §5.2 `dpop_bound_access_tokens`: token requests without a DPoP proof are refused. */
  dpopBoundAccessTokens?: boolean;
  /** RFC 9449 §8: this client's DPoP proofs must carry a nonce the server supplied. */
  dpopNonceRequired?: boolean;
  /** RFC 9126 §6: /authorize accepts this client's requests only by `request_uri` from PAR. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 8693: what this client may obtain by token exchange; absent → token exchange is refused. */
  tokenExchange?: TokenExchangePolicy | null;
  /** Logging out of the SSO session keeps this client's grants (and refresh tokens) alive. */
  keepOfflineAccessOnLogout?: boolean;
  /** Every user signs in with a second factor for this client (seed `require_mfa`). */
  requireMfa?: boolean;
  /**
   * The client's registration is the Client ID Metadata Document at its `client_id` URL
   * (client-id-metadata-document.ts): consent is asked every time and redirect URIs match exactly.
   */
  fromMetadataDocument?: boolean;
  /**
   * The client registered itself (RFC 7591): documents it names (`jwks_uri`) are fetched with the
   * server-side request forgery guards, as a metadata document is.
   */
  dynamicallyRegistered?: boolean;
  /**
   * Seconds after its rotation during which a refresh token presented again by this client (with
   * the same DPoP key when bound) gets the same successor again (seed `refresh_token_reuse_interval`,
   * 0–60); absent or 0: strict rotation, every reuse revokes the chain (RFC 9700 §4.14.2).
   */
  refreshTokenReuseInterval?: number;
  /**
   * Client authentication methods this client may use (RFC 7591 §2 `token_endpoint_auth_method`;
   * see `clientAuthMethods` for records without it).
   */
  authMethods?: readonly ClientAuthenticationMethod[];
  /** RFC 7591 §2 `jwks`: the client's public keys, for `private_key_jwt` and request objects. */
  jwks?: { keys: readonly JWK[] } | null;
  /** RFC 7591 §2 `jwks_uri`: where the client publishes its public keys. */
  jwksUri?: string | null;
  /**
   * OIDC Registration §2 `request_uris`: the URLs this client hosts request objects at (RFC 9101
   * §5.2); /authorize fetches only these (oauth-core request-uri.ts).
   */
  requestUris?: readonly string[];
  /** RFC 9101 §10.5 `require_signed_request_object`: authorization requests only as signed JWTs. */
  requireSignedRequestObject?: boolean;
  /** JARM client metadata `authorization_signed_response_alg`: how this client's signed responses are signed. */
  authorizationSignedResponseAlg?: SigningAlg;
  /** Every authorization response to this client is a signed JWT (JARM; seed `require_signed_authorization_response`). */
  requireSignedAuthorizationResponse?: boolean;
  /**
   * OIDC Dynamic Client Registration §2 `userinfo_signed_response_alg`: UserInfo answers this client
   * with a JWT signed with this algorithm; absent or `null`, with plain JSON.
   */
  userinfoSignedResponseAlg?: SigningAlg | null;
  /** `fapi2`: the FAPI 2.0 Security Profile applies to this client (README "FAPI 2.0"). */
  profile?: 'fapi2' | null;
}

/** RFC 8693 §3 token type identifiers. */
export const TOKEN_TYPES = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  refreshToken: 'urn:ietf:params:oauth:token-type:refresh_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
} as const;
export type TokenTypeUri = (typeof TOKEN_TYPES)[keyof typeof TOKEN_TYPES];

/** Per-client RFC 8693 policy (RFC 8693 §1: the server decides what may be exchanged for what). */
export interface TokenExchangePolicy {
  /** Resource ids the client may obtain tokens for (`audience` / `resource`, exact match). */
  audiences: readonly string[];
  /** Scopes the client may obtain; the result never exceeds the subject token's scope either. */
  scopes: readonly string[];
  /** Accepted `subject_token_type` values: access tokens, and ID tokens issued to this client. */
  subjectTokenTypes: readonly TokenTypeUri[];
}

/** An API: the `aud` of access tokens that carry its scopes. */
export interface Resource {
  id: string;
  scopes: readonly string[];
  accessTokenFormat: 'jwt' | 'opaque';
  /** Seconds. */
  accessTokenTtl: number;
  accessTokenSigningAlg: SigningAlg;
  /** Keyed hash of the introspection secret; `null` when the resource cannot introspect. */
  secretHash: string | null;
  /** User claims copied into its access tokens. */
  claims: readonly string[];
  /** Access tokens for it come only from grants that met the multi-factor level (seed `require_mfa`). */
  requireMfa?: boolean;
}

export interface User {
  sub: string;
  username: string;
  /** scrypt hash in the PHC-like format written by the server. */
  passwordHash: string;
  name: string | null;
  email: string | null;
  emailVerified: boolean;
  /** When set, the user can be granted these scopes only. */
  allowedScopes: readonly string[] | null;
  /** The user always signs in with a second factor (seed `mfa_required`). */
  mfaRequired?: boolean;
  /**
   * Group names for the `groups` claim (a directory user's groups, read at each sign-in); absent or
   * `null` for users no directory speaks for, whose tokens then carry no `groups` claim.
   */
  groups?: readonly string[] | null;
  /**
   * The language (BCP 47) of the pages the user last signed in with, which mails sent without a
   * page speak; absent when the store does not say (the sign-in then records it unconditionally).
   */
  locale?: string | null;
}

/**
 * One authorization given by a user to a client (or obtained by a device code). Every code and
 * token row carries its grant id, so reuse detection and logout revoke by grant.
 */
export interface Grant {
  id: string;
  clientId: string;
  sub: string;
  scopes: readonly string[];
  /** RFC 8707 resources bound at authorization time (empty: derived from scopes). */
  resources: readonly string[];
  /** The SSO session the grant was obtained in (OIDC `sid`), if any. */
  sid: string | null;
  /** When the user authenticated (OIDC `auth_time`). */
  authTime: number | null;
  /** RFC 8176 `amr` of the sign-in the grant came from; absent for grants without a user sign-in. */
  amr?: readonly string[] | null;
  /** OIDC `acr` the sign-in reached (`ACR_VALUES`); a refresh keeps it, never raises it. */
  acr?: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/**
 * Who approved a request and how they signed in: what an authorization code (OIDC Core §3.1.2.5)
 * or a device approval (RFC 8628 §3.3) carries into its Grant for `sid`, `auth_time`, `amr`, `acr`.
 */
export interface AuthorizationSubject {
  sub: string;
  /**
   * Scopes to grant (requested ∩ client's ∩ user's, possibly narrowed by consent). Clamped to the
   * request and the client. Omitted: computed with `grantableScopes` from the user record.
   */
  scopes?: readonly string[];
  /** The SSO session (OIDC `sid`). */
  sid: string | null;
  /** When the user authenticated (OIDC `auth_time`). */
  authTime: number;
  /** RFC 8176 `amr` and OIDC `acr` of the sign-in (`amrOf`, `acrOf`). */
  amr?: readonly string[];
  acr?: string | null;
}

export interface AuthorizationCode {
  codeHash: string;
  grantId: string;
  clientId: string;
  sub: string;
  redirectUri: string;
  /** RFC 7636 S256 challenge; `null` only for confidential clients that did not use PKCE. */
  codeChallenge: string | null;
  nonce: string | null;
  scopes: readonly string[];
  resources: readonly string[];
  sid: string | null;
  authTime: number;
  expiresAt: number;
  usedAt: number | null;
  /** RFC 9449 §10: thumbprint of the DPoP key the code is bound to (`dpop_jkt`); the token request must prove it. */
  dpopJkt?: string | null;
}

export interface RefreshToken {
  tokenHash: string;
  grantId: string;
  clientId: string;
  sub: string;
  scopes: readonly string[];
  resources: readonly string[];
  /** The token this one replaced (rotation chain). */
  parentHash: string | null;
  createdAt: number;
  expiresAt: number;
  /** Set when rotated; presenting a used token again is reuse (RFC 9700 §4.14.2). */
  usedAt: number | null;
  revokedAt: number | null;
  /** RFC 9449 §5: thumbprint of the DPoP key the token is bound to (public clients). */
  dpopJkt: string | null;
  /**
   * This token's value sealed under a key derived from its parent token (`tokens/successor-seal.ts`),
   * so that the parent, presented again within the client's reuse interval, can be answered with
   * this same token; absent when the client has no reuse interval.
   */
  sealedUnderParent?: string;
}

export interface OpaqueAccessToken {
  tokenHash: string;
  /** `null` for client_credentials tokens, which belong to no user grant. */
  grantId: string | null;
  clientId: string;
  sub: string;
  scopes: readonly string[];
  audience: readonly string[];
  issuedAt: number;
  expiresAt: number;
  revokedAt: number | null;
  dpopJkt: string | null;
  /** User claims copied for the resource (`Resource.claims`), reported by introspection. */
  claims: Readonly<Record<string, unknown>>;
}

/** What the server hands back from the token endpoint (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope?: string;
  refresh_token?: string;
  id_token?: string;
  /** RFC 8693 §2.2.1 */
  issued_token_type?: string;
}

/**
 * RFC 8628 §3.5 states of a device authorization. Expiry is not a state of its own: every
 * transition is conditional on `expiresAt`, so an expired code can never move on.
 */
export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

/** A device authorization (RFC 8628 §3.1–3.2): one `device_code` and its `user_code`. */
export interface DeviceCode {
  deviceCodeHash: string;
  /** `hashToken` of the normalised user code (8 letters, no dash). */
  userCodeHash: string;
  clientId: string;
  /** Requested scopes, each allowed to the client (the user's restriction applies at approval). */
  scopes: readonly string[];
  /** RFC 8707 resources named in the device authorization request. */
  resources: readonly string[];
  createdAt: number;
  expiresAt: number;
  /** Minimum seconds between polls; grows by 5 with every `slow_down` (RFC 8628 §3.5). */
  interval: number;
  lastPolledAt: number | null;
  status: DeviceCodeStatus;
  /** The Grant created when the user approved; `null` before. */
  grantId: string | null;
  /** The user who approved or denied. */
  sub: string | null;
  /** When the user approved or denied. */
  decidedAt: number | null;
  redeemedAt: number | null;
}
