/**
 * Domain errors. Each carries the HTTP status it maps to and a message that is safe to show to the
 * caller; the one global error handler (plugins/error-handler.ts) turns them into
 * `{ statusCode, message }`. Anything that is not a DomainError is answered with a generic 500.
 */
import { authenticationChallenge, type ChallengeParameters } from '@oidc-orders/oauth-core';

export abstract class DomainError extends Error {
  abstract readonly statusCode: number;
  /** Stable, switchable identifier; the message may be reworded, the code may not. */
  abstract readonly code: string;
  /** Response headers the error requires, such as an RFC 6750 `WWW-Authenticate` challenge. */
  readonly headers: Readonly<Record<string, string>> = {};
  /**
   * A dependency (authorization server, upstream API) is unavailable: logged as a warning without
   * a stack, since nothing in this service is broken.
   */
  readonly dependencyFailure: boolean = false;
}

export class OrderNotFoundError extends DomainError {
  readonly statusCode = 404;
  readonly code = 'ORDER_NOT_FOUND';
  constructor(readonly orderId: number) {
    super(`Order ${orderId} not found`);
    this.name = 'OrderNotFoundError';
  }
}

export class OrderTotalOutOfRangeError extends DomainError {
  readonly statusCode = 400;
  readonly code = 'ORDER_TOTAL_OUT_OF_RANGE';
  constructor(readonly quantity: number) {
    super(`Order total for quantity ${quantity} exceeds the largest storable amount (9999999999.99)`);
    this.name = 'OrderTotalOutOfRangeError';
  }
}

/** The orders specification: a missing key is refused like a wrong one (403), never 401. */
export class MissingApiKeyError extends DomainError {
  readonly statusCode = 403;
  readonly code = 'API_KEY_MISSING';
  constructor() {
    super('Missing x-api-key header');
    this.name = 'MissingApiKeyError';
  }
}

export class InvalidApiKeyError extends DomainError {
  readonly statusCode = 403;
  readonly code = 'API_KEY_INVALID';
  constructor() {
    super('Invalid API key');
    this.name = 'InvalidApiKeyError';
  }
}

export class TransactionTimeoutError extends DomainError {
  readonly statusCode = 503;
  readonly code = 'TRANSACTION_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`The database did not complete the write within ${timeoutMs} ms; nothing was stored, retry later`);
    this.name = 'TransactionTimeoutError';
  }
}

export class SignInUnavailableError extends DomainError {
  override readonly dependencyFailure = true;
  readonly statusCode = 503;
  readonly code = 'SIGN_IN_UNAVAILABLE';
  constructor(reason: 'not-configured' | 'discovering', feature = 'Sign-in') {
    super(
      reason === 'not-configured'
        ? `${feature} is not configured on this service: set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET`
        : `${feature} is temporarily unavailable: the authorization server metadata could not be read yet (retrying)`,
    );
    this.name = 'SignInUnavailableError';
  }
}

export class NotSignedInError extends DomainError {
  readonly statusCode = 401;
  readonly code = 'NOT_SIGNED_IN';
  constructor(message = 'Not signed in') {
    super(message);
    this.name = 'NotSignedInError';
  }
}

export class MissingCsrfHeaderError extends DomainError {
  readonly statusCode = 400;
  readonly code = 'CSRF_HEADER_MISSING';
  constructor() {
    super('BFF requests must carry the header X-CSRF: 1');
    this.name = 'MissingCsrfHeaderError';
  }
}

export class InvalidReturnUrlError extends DomainError {
  readonly statusCode = 400;
  readonly code = 'RETURN_URL_INVALID';
  constructor() {
    super('returnUrl must be a local path such as /orders');
    this.name = 'InvalidReturnUrlError';
  }
}

export class MissingEmailClaimError extends DomainError {
  readonly statusCode = 403;
  readonly code = 'EMAIL_CLAIM_MISSING';
  constructor() {
    super('The signed-in user has no email claim (request the email scope) and cannot place orders');
    this.name = 'MissingEmailClaimError';
  }
}

/** The authorization schemes this API accepts (RFC 6750 Bearer, RFC 9449 §7 DPoP). */
export type TokenScheme = 'Bearer' | 'DPoP';

export interface ChallengeOptions {
  realm: string;
  /** With `insufficient_scope`: the scope the token lacks. */
  scope?: string;
  /** The scheme whose challenge carries the error (the scheme the caller used, or the one it must use). */
  scheme?: TokenScheme;
  /** RFC 9449 §7.1: the `algs` the DPoP challenge advertises; without it only Bearer is offered. */
  dpopAlgs?: readonly string[];
  /**
   * RFC 9728 §5.1: the URL of this resource's metadata, on every challenge (with or without an
   * error) so a client that only knows the resource can discover its authorization server.
   */
  resourceMetadata?: string | undefined;
}

/**
 * RFC 6750 §3 and RFC 9449 §7.1: 401 `invalid_token` / `invalid_dpop_proof`, 403
 * `insufficient_scope`, with one `WWW-Authenticate` listing both schemes: the error goes on the
 * challenge of `scheme`, the other scheme is offered bare, so a client learns what is accepted.
 */
export class BearerTokenError extends DomainError {
  readonly statusCode: 401 | 403;
  readonly code:
    | 'BEARER_TOKEN_MISSING'
    | 'BEARER_TOKEN_INVALID'
    | 'BEARER_SCOPE_INSUFFICIENT'
    | 'DPOP_PROOF_INVALID';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(
    readonly error: 'missing' | 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof',
    description: string,
    options: ChallengeOptions,
  ) {
    super(description);
    this.name = 'BearerTokenError';
    this.statusCode = error === 'insufficient_scope' ? 403 : 401;
    this.code = ACCESS_TOKEN_ERROR_CODES[error];
    this.headers = { 'www-authenticate': challenges(error, description, options) };
  }
}

const ACCESS_TOKEN_ERROR_CODES = {
  missing: 'BEARER_TOKEN_MISSING',
  invalid_token: 'BEARER_TOKEN_INVALID',
  insufficient_scope: 'BEARER_SCOPE_INSUFFICIENT',
  invalid_dpop_proof: 'DPOP_PROOF_INVALID',
} as const;

function challenges(error: BearerTokenError['error'], description: string, options: ChallengeOptions) {
  const scheme = options.scheme ?? 'Bearer';
  // RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
  const errorParameters: ChallengeParameters =
    error === 'missing'
      ? []
      : [
          ['error', error],
          ['error_description', description],
          ['scope', options.scope || undefined],
        ];
  const realm = ['realm', options.realm] as const;
  const metadata = ['resource_metadata', options.resourceMetadata] as const;
  const bearer = authenticationChallenge('Bearer', [
    realm,
    metadata,
    ...(scheme === 'Bearer' ? errorParameters : []),
  ]);
  if (!options.dpopAlgs) return bearer;
  const dpop = authenticationChallenge('DPoP', [
    realm,
    metadata,
    ...(scheme === 'DPoP' ? errorParameters : []),
    ['algs', options.dpopAlgs.join(' ')],
  ]);
  return scheme === 'DPoP' ? `${dpop}, ${bearer}` : `${bearer}, ${dpop}`;
}

/** The token could not be checked because a dependency failed (JWKS, introspection): not the caller's fault. */
export class TokenVerificationUnavailableError extends DomainError {
  override readonly dependencyFailure = true;
  readonly statusCode = 503;
  readonly code = 'TOKEN_VERIFICATION_UNAVAILABLE';
  constructor(what: string) {
    super(`Cannot verify the access token right now: ${what}`);
    this.name = 'TokenVerificationUnavailableError';
  }
}

export class AuthorizationServerUnavailableError extends DomainError {
  override readonly dependencyFailure = true;
  readonly statusCode = 502;
  readonly code = 'AUTHORIZATION_SERVER_UNAVAILABLE';
  constructor(what: string) {
    super(`The authorization server could not be reached: ${what}`);
    this.name = 'AuthorizationServerUnavailableError';
  }
}

export class UpstreamUnavailableError extends DomainError {
  override readonly dependencyFailure = true;
  readonly statusCode: 502 | 504;
  readonly code: 'UPSTREAM_UNREACHABLE' | 'UPSTREAM_TIMEOUT' | 'UPSTREAM_NOT_JSON';
  constructor(kind: 'unreachable' | 'timeout' | 'not-json') {
    super(
      kind === 'unreachable'
        ? 'The orders API (UPSTREAM_API_URL) is unreachable'
        : kind === 'timeout'
          ? 'The orders API (UPSTREAM_API_URL) did not answer in time'
          : 'The orders API (UPSTREAM_API_URL) answered with a body that is not JSON',
    );
    this.name = 'UpstreamUnavailableError';
    this.statusCode = kind === 'timeout' ? 504 : 502;
    this.code =
      kind === 'unreachable'
        ? 'UPSTREAM_UNREACHABLE'
        : kind === 'timeout'
          ? 'UPSTREAM_TIMEOUT'
          : 'UPSTREAM_NOT_JSON';
  }
}

/** The database cannot be reached right now (503, not 500): one class for both apps. */
export { DatabaseUnavailableError } from '@oidc-orders/service-kit';

/**
 * A path segment, query value, form or JSON value, or header holds a control
 * character, invalid UTF-8 or a lone surrogate. Refused before any route sees it, so no such value
 * reaches SQL (PostgreSQL refuses NUL: a 500) or a page.
 */
export class InvalidCharactersError extends DomainError {
  readonly statusCode = 400;
  readonly code = 'REQUEST_CHARACTERS_INVALID';
  constructor(where: 'path' | 'query' | 'header' | 'body') {
    super(`The request ${where} holds control characters or invalid UTF-8`);
    this.name = 'InvalidCharactersError';
  }
}
