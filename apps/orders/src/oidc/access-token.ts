import { errors as joseErrors, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { TokenVerificationUnavailableError } from '../errors.js';
import { ACCEPTED_ALGORITHMS } from './jwks.js';
import type { DiscoveredProvider } from './provider.js';
import type { VerifiedAccessToken, VerifiedTokenCache } from './verified-token-cache.js';

export type { VerifiedAccessToken } from './verified-token-cache.js';

/** The token is not acceptable here; `description` is safe to send in `error_description`. */
export class InvalidAccessTokenError extends Error {
  constructor(readonly description: string) {
    super(description);
    this.name = 'InvalidAccessTokenError';
  }
}

const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface AccessTokenContext {
  provider: DiscoveredProvider;
  /** RESOURCE_ID: the `aud` this API requires. */
  resourceId: string;
  /** JWT access tokens already verified (never opaque ones); see VerifiedTokenCache. */
  cache?: VerifiedTokenCache;
}

/**
 * Verifies an access token presented to this API. A JWS is a JWT access token (RFC 9068) checked
 * here with the provider's cached keys; anything else is opaque and asked about at the introspection
 * endpoint (RFC 7662), authenticated as RESOURCE_ID. No introspection cache: a revoked opaque token
 * is refused on its very next use.
 */
export async function verifyAccessToken(
  token: string,
  context: AccessTokenContext,
): Promise<VerifiedAccessToken> {
  return JWS_COMPACT.test(token)
    ? verifyJwtAccessToken(token, context)
    : introspectAccessToken(token, context);
}

async function verifyJwtAccessToken(token: string, { provider, resourceId, cache }: AccessTokenContext) {
  const nowMs = Date.now();
  const cached = cache?.get(token, provider, nowMs);
  if (cached !== undefined) return cached;
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, provider.jwks, {
      issuer: provider.issuer,
      audience: resourceId,
      // RFC 9068 §4: the `typ` header MUST be checked, so an ID token (typ JWT) or any other JWT
      // signed by the same keys is never taken for an access token.
      typ: 'at+jwt',
      algorithms: [...ACCEPTED_ALGORITHMS],
      requiredClaims: ['exp', 'iat', 'sub'],
      // RFC 9068 §4: the current time MUST be before `exp`; no tolerance is added.
      clockTolerance: 0,
    }));
  } catch (error) {
    throw classifyJoseError(error);
  }
  const verified: VerifiedAccessToken = {
    format: 'jwt' as const,
    sub: typeof payload.sub === 'string' ? payload.sub : undefined,
    email: typeof payload.email === 'string' ? payload.email.toLowerCase() : undefined,
    scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
    clientId: typeof payload.client_id === 'string' ? payload.client_id : undefined,
    jkt: boundKeyThumbprint(payload.cnf),
  };
  // `exp` is a required claim, checked above.
  if (typeof payload.exp === 'number') cache?.set(token, verified, payload.exp, provider, nowMs);
  return verified;
}

async function introspectAccessToken(token: string, { provider, resourceId }: AccessTokenContext) {
  if (!provider.introspection) {
    // Without RESOURCE_SECRET this API cannot authenticate at the introspection endpoint.
    throw new InvalidAccessTokenError(
      'Opaque access tokens are not accepted here (introspection is not configured)',
    );
  }
  let response: client.IntrospectionResponse;
  try {
    response = await client.tokenIntrospection(provider.introspection, token, {
      token_type_hint: 'access_token',
    });
  } catch (error) {
    throw new TokenVerificationUnavailableError(
      `introspection failed (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  // RFC 7662 §2.2: anything but `active: true` means the token is not usable, reason unspecified.
  if (response.active !== true) throw new InvalidAccessTokenError('The access token is not active');
  const audiences = Array.isArray(response.aud)
    ? response.aud
    : response.aud === undefined
      ? []
      : [response.aud];
  if (!audiences.includes(resourceId))
    throw new InvalidAccessTokenError('The access token is for another audience');
  if (response.iss !== undefined && response.iss !== provider.issuer) {
    throw new InvalidAccessTokenError('The access token was issued by another server');
  }
  if (typeof response.exp === 'number' && response.exp * 1000 <= Date.now()) {
    throw new InvalidAccessTokenError('The access token expired');
  }
  const jkt = boundKeyThumbprint(response.cnf);
  // RFC 9449 §6.2: a DPoP token is judged by its `cnf.jkt`; one without it cannot be checked, and
  // a token type this API does not know is not downgraded to bearer.
  const tokenType = response.token_type?.toLowerCase();
  if (tokenType !== undefined && tokenType !== 'bearer' && (tokenType !== 'dpop' || jkt === undefined)) {
    throw new InvalidAccessTokenError('The access token is of a type this API does not accept');
  }
  const email = response.email;
  return {
    format: 'opaque' as const,
    sub: typeof response.sub === 'string' ? response.sub : undefined,
    email: typeof email === 'string' ? email.toLowerCase() : undefined,
    scopes: typeof response.scope === 'string' ? response.scope.split(' ').filter(Boolean) : [],
    clientId: typeof response.client_id === 'string' ? response.client_id : undefined,
    jkt,
  };
}

/**
 * RFC 7800 `cnf` with the RFC 9449 §6.1 `jkt` member. A token confirmed some other way (an mTLS
 * `x5t#S256`, RFC 8705) is refused: this API cannot check it and must not treat it as bearer.
 */
function boundKeyThumbprint(cnf: unknown): string | undefined {
  if (cnf === undefined) return undefined;
  const jkt = cnf !== null && typeof cnf === 'object' ? (cnf as { jkt?: unknown }).jkt : undefined;
  if (typeof jkt !== 'string' || jkt.length === 0) {
    throw new InvalidAccessTokenError('The access token is bound to a key in a way this API cannot check');
  }
  return jkt;
}

/** The caller's fault → InvalidAccessTokenError (401); ours or the provider's → 503. */
function classifyJoseError(error: unknown): Error {
  if (!(error instanceof joseErrors.JOSEError)) {
    // fetch() of the JWKS failed (connection refused, DNS…).
    return new TokenVerificationUnavailableError('the signing keys could not be read');
  }
  switch (error.code) {
    case 'ERR_JWT_EXPIRED':
      return new InvalidAccessTokenError('The access token expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const claim = (error as joseErrors.JWTClaimValidationFailed).claim;
      return new InvalidAccessTokenError(`The access token's "${claim}" is not valid here`);
    }
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return new InvalidAccessTokenError('The access token signature is invalid');
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return new InvalidAccessTokenError(
        'The access token is not signed by a key of the authorization server',
      );
    case 'ERR_JWKS_TIMEOUT':
    case 'ERR_JWKS_INVALID':
    case 'ERR_JOSE_GENERIC':
      return new TokenVerificationUnavailableError('the signing keys could not be read');
    default:
      return new InvalidAccessTokenError('The access token is malformed');
  }
}
