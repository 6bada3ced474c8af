import { authenticationChallenge } from './challenge.js';
/**
 * One error type for the whole protocol layer. Handlers throw (or return) these values;
 * the HTTP layer maps them to the wire in exactly one place (RFC 6749 §5.2 JSON body,
 * RFC 6750 §3 `WWW-Authenticate` for bearer errors, or a redirect for /authorize).
 *
 * `description` is public and fixed per cause; `detail` is private: it is logged, never sent
 * (the node-oidc-provider idea: an `invalid_grant` must not tell an attacker which check failed).
 */
export type OAuthErrorCode =
  // RFC 6749 §4.1.2.1 / §5.2
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  // OpenID Connect Core §3.1.2.6
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'invalid_request_uri'
  // RFC 9101 §6.3
  | 'invalid_request_object'
  // RFC 6750 §3.1
  | 'invalid_token'
  | 'insufficient_scope'
  // RFC 7009 §2.2.1
  | 'unsupported_token_type'
  // RFC 8628 §3.5
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  // RFC 8707 §2 / RFC 8693 §2.2.2
  | 'invalid_target'
  // RFC 9449 §5, §8
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // RFC 7591 §3.2.2
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_software_statement'
  | 'unapproved_software_statement';

export interface OAuthErrorOptions {
  /** Public, human-readable text (RFC 6749 `error_description`); must not leak which check failed. */
  description?: string;
  /** Private reason, for logs only. */
  detail?: string;
  /** HTTP status; defaults from the code. */
  status?: number;
  /** Extra response headers (e.g. `WWW-Authenticate`, `DPoP-Nonce`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

const defaultStatus: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  server_error: 500,
  temporarily_unavailable: 503,
};

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly description: string | undefined;
  readonly detail: string | undefined;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: OAuthErrorCode, options: OAuthErrorOptions = {}) {
    super(options.description ?? code, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OAuthError';
    this.code = code;
    this.description = options.description;
    this.detail = options.detail;
    this.status = options.status ?? defaultStatus[code] ?? 400;
    this.headers = options.headers ?? {};
  }

  /** The RFC 6749 §5.2 body. Only public fields. */
  toJSON(): { error: OAuthErrorCode; error_description?: string } {
    return this.description === undefined
      ? { error: this.code }
      : { error: this.code, error_description: this.description };
  }
}

export const isOAuthError = (value: unknown): value is OAuthError => value instanceof OAuthError;

// Small constructors: the public description is fixed per code, the detail says what really happened.
export const invalidRequest = (description: string, detail?: string) =>
  new OAuthError('invalid_request', { description, detail });
export const invalidClient = (detail?: string) =>
  new OAuthError('invalid_client', {
    description: 'client authentication failed',
    detail,
    // RFC 6749 §5.2: 401 with WWW-Authenticate when the client tried to authenticate.
    headers: {
      'WWW-Authenticate': authenticationChallenge('Basic', [
        ['realm', 'token'],
        ['charset', 'UTF-8'],
      ]),
    },
  });
export const invalidGrant = (detail?: string) =>
  new OAuthError('invalid_grant', {
    description: 'the grant is invalid, expired, revoked or was issued to another client',
    detail,
  });
export const unauthorizedClient = (detail?: string) =>
  new OAuthError('unauthorized_client', {
    description: 'the client is not allowed to use this grant type',
    detail,
  });
export const unsupportedGrantType = (grantType: string) =>
  new OAuthError('unsupported_grant_type', {
    description: 'unsupported grant_type',
    detail: `grant_type=${grantType.slice(0, 100)}`,
  });
export const invalidScope = (detail?: string) =>
  new OAuthError('invalid_scope', { description: 'the requested scope is invalid or not allowed', detail });
export const invalidTarget = (detail?: string) =>
  new OAuthError('invalid_target', {
    description: 'the requested resource is invalid or not allowed',
    detail,
  });
export const accessDenied = (description = 'the resource owner denied the request', detail?: string) =>
  new OAuthError('access_denied', { description, detail });
export const serverError = (detail?: string, cause?: unknown) =>
  new OAuthError('server_error', { description: 'internal server error', detail, cause });
export const temporarilyUnavailable = (detail?: string, cause?: unknown) =>
  new OAuthError('temporarily_unavailable', {
    description: 'the server is temporarily unavailable, retry later',
    detail,
    cause,
  });
export const unsupportedResponseType = (detail?: string) =>
  new OAuthError('unsupported_response_type', {
    description: 'unsupported response_type',
    detail,
  });

/** RFC 6750 §3: `WWW-Authenticate: Bearer` with the error (and, for insufficient_scope, the scope). */
function bearerChallenge(code: OAuthErrorCode, description: string, scope?: string): string {
  return authenticationChallenge('Bearer', [
    ['error', code],
    ['error_description', description],
    ['scope', scope],
  ]);
}

/** RFC 6750 §3.1: 401, the token is expired, revoked, malformed or unknown. */
export const invalidToken = (detail?: string) => {
  const description = 'the access token is invalid';
  return new OAuthError('invalid_token', {
    description,
    detail,
    headers: { 'WWW-Authenticate': bearerChallenge('invalid_token', description) },
  });
};

/** RFC 6750 §3.1: 403, the token lacks a scope the resource requires (`scope` names it). */
export const insufficientScope = (scope: string, detail?: string) => {
  const description = 'the access token does not carry the required scope';
  return new OAuthError('insufficient_scope', {
    description,
    detail,
    headers: { 'WWW-Authenticate': bearerChallenge('insufficient_scope', description, scope) },
  });
};

// RFC 8628 §3.5: the device access token responses that tell the device to keep polling or stop.
export const authorizationPending = () =>
  new OAuthError('authorization_pending', {
    description: 'the user has not yet completed the authorization',
  });
export const slowDown = (interval: number) =>
  new OAuthError('slow_down', {
    description: `polling too fast; wait at least ${interval} seconds between requests`,
  });
export const expiredToken = (detail?: string) =>
  new OAuthError('expired_token', {
    description: 'the device_code has expired; start a new device authorization',
    detail,
  });
