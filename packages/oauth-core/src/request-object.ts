import { type JWTPayload, UnsecuredJWT } from 'jose';
import { type AuthorizationParams, AuthorizationRequestError } from './authorization.js';
import type { ClientKeySource } from './client-signed-jwt.js';
import { verifyClientSignedJwt } from './client-signed-jwt.js';
import { JWT_CLOCK_SKEW_SECONDS } from './clock-skew.js';
import { invalidRequest, OAuthError } from './errors.js';
import { fapi2RequestObjectTimeProblem } from './fapi2.js';
import type { Client } from './model.js';
import type { Clock } from './runtime.js';
import type { JtiReplayStore } from './storage/dpop-replay.js';
import type { ClientStore } from './storage/index.js';
import { hashToken } from './tokens/opaque.js';

/**
 * JWT-Secured Authorization Requests (RFC 9101): the authorization request's parameters as the
 * claims of a JWT signed by the client (`request`, by value), at the PAR endpoint and at /authorize;
 * by reference (`request_uri`, request-uri.ts) the object may also be unsigned.
 */

/** How far ahead a request object's `exp` may be (seconds). */
export const MAX_REQUEST_OBJECT_LIFETIME_SECONDS = 3600;
const MAX_REQUEST_OBJECT_LENGTH = 32_768;
/** JWT claims that describe the object itself, not authorization parameters. */
const ENVELOPE_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);

const invalidRequestObject = (detail: string) =>
  new OAuthError('invalid_request_object', { description: 'the request object is invalid', detail });

/** Authorization parameters taken from a request object: single strings, `resource` may repeat. */
export type RequestObjectParams = Record<string, string | string[]>;

/**
 * RFC 9101 claim checks, pure: `iss` is the client (§6.1 with OAuth 2.0 JWT BCP), `aud` the issuer
 * (§4: "the value … SHOULD be or include the authorization server's Issuer Identifier"), `client_id`
 * inside equals the outer one (§5: "the client_id … MUST" match), `exp` present and not far ahead,
 * `nbf` not in the future. `jti` is optional: neither RFC 9101 nor FAPI 2.0 Message Signing requires
 * it; when present it is a non-empty string, and the caller refuses its replay. A `fapi2` client's
 * object also meets FAPI 2.0 Message Signing §5.3.1 (`nbf` required, bounded). Returns the
 * parameters (§5: "the authorization server MUST only use the parameters in the Request Object").
 */
export function checkRequestObjectClaims(
  payload: JWTPayload,
  check: { clientId: string; issuer: string; now: number; profile?: Client['profile'] },
): { params: RequestObjectParams; jti: string | null; exp: number } {
  if (payload.iss !== check.clientId) throw invalidRequestObject('iss is not the client_id');
  if (!audienceIncludes(payload.aud, check.issuer)) throw invalidRequestObject('aud is not the issuer');
  if (payload.client_id !== undefined && payload.client_id !== check.clientId) {
    throw invalidRequestObject('client_id differs from the request');
  }
  const { exp, nbf, jti } = payload;
  if (typeof exp !== 'number' || exp <= check.now - JWT_CLOCK_SKEW_SECONDS)
    throw invalidRequestObject('exp missing or passed');
  if (exp > check.now + MAX_REQUEST_OBJECT_LIFETIME_SECONDS) throw invalidRequestObject('exp too far ahead');
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > check.now + JWT_CLOCK_SKEW_SECONDS)) {
    throw invalidRequestObject('not yet valid');
  }
  const fapi2Problem =
    check.profile === 'fapi2' ? fapi2RequestObjectTimeProblem({ nbf, exp }, check.now) : null;
  if (fapi2Problem !== null) throw invalidRequestObject(fapi2Problem);
  if (jti !== undefined && (typeof jti !== 'string' || jti === '' || jti.length > 256)) {
    throw invalidRequestObject('jti is not a usable string');
  }
  return { params: parametersOf(payload, check.clientId), jti: jti ?? null, exp };
}

function audienceIncludes(aud: JWTPayload['aud'], issuer: string): boolean {
  return aud === issuer || (Array.isArray(aud) && aud.includes(issuer));
}

/**
 * The claim checks for an unsigned object (see `verifyUnsignedRequestObject`): OIDC Core §6.1 says
 * `iss` and `aud` "SHOULD" be present only when the object is signed, so each is optional but, when
 * present, must name the client and the issuer; `client_id` inside, when present, equals the outer
 * one (RFC 9101 §5); `exp`, when present, has not passed and `nbf` has (jose checks both on decode).
 * `jti` is not kept against replay: anyone can mint an unsigned object, so a first use proves
 * nothing, and no lifetime bound applies for the same reason. Returns the parameters.
 */
export function checkUnsignedRequestObjectClaims(
  payload: JWTPayload,
  check: { clientId: string; issuer: string },
): RequestObjectParams {
  if (payload.iss !== undefined && payload.iss !== check.clientId)
    throw invalidRequestObject('iss is not the client_id');
  if (payload.aud !== undefined && !audienceIncludes(payload.aud, check.issuer))
    throw invalidRequestObject('aud is not the issuer');
  if (payload.client_id !== undefined && payload.client_id !== check.clientId) {
    throw invalidRequestObject('client_id differs from the request');
  }
  return parametersOf(payload, check.clientId);
}

function parametersOf(payload: JWTPayload, clientId: string): RequestObjectParams {
  const params: RequestObjectParams = { client_id: clientId };
  for (const [name, value] of Object.entries(payload)) {
    if (ENVELOPE_CLAIMS.has(name) || name === 'client_id') continue;
    // RFC 9101 §4: "request and request_uri parameters MUST NOT be included in Request Objects".
    if (name === 'request' || name === 'request_uri') throw invalidRequestObject(`${name} inside the object`);
    if (name === 'resource' && Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      params.resource = value as string[];
    } else if (typeof value === 'string') {
      params[name] = value;
    } else if (typeof value === 'number') {
      // `max_age` is a number in JSON (OIDC Core §6.1).
      params[name] = String(value);
    } else {
      throw invalidRequestObject(`${name.slice(0, 50)} is not a string`);
    }
  }
  return params;
}

export interface RequestObjectDeps {
  keys: ClientKeySource;
  replay: JtiReplayStore;
  issuer: string;
  clock: Clock;
}

/**
 * Verifies a request object sent by `client` (signature by one of its keys with an allowed
 * asymmetric algorithm; `none` is never accepted here, RFC 9101 §10.2: this is the path for
 * objects by value and at PAR; see `verifyUnsignedRequestObjectByReference`), checks its claims, refuses a
 * second use of its `jti` when it has one, and returns its parameters.
 */
export async function verifyRequestObject(
  requestObject: string,
  client: Client,
  deps: RequestObjectDeps,
): Promise<RequestObjectParams> {
  const { payload, now } = await verifyClientSignedJwt(requestObject, client, deps, {
    maxLength: MAX_REQUEST_OBJECT_LENGTH,
    clockSkewSeconds: JWT_CLOCK_SKEW_SECONDS,
    fail: invalidRequestObject,
  });
  const { params, jti, exp } = checkRequestObjectClaims(payload, {
    clientId: client.clientId,
    issuer: deps.issuer,
    now,
    profile: client.profile,
  });
  if (
    jti !== null &&
    !(await deps.replay.markUsed(hashToken(`request_object:${client.clientId}:${jti}`), exp))
  ) {
    throw invalidRequestObject('jti already used');
  }
  return params;
}

/**
 * Whether `client` may send an unsigned (`alg: none`) request object by reference: not a FAPI 2.0
 * client (FAPI 2.0 Message Signing: signed objects only) and not one that registered
 * `require_signed_request_object` (RFC 9101 §10.5). Clients keep no `request_object_signing_alg`
 * here (registration does not store it), so no registered algorithm can forbid `none`.
 */
export function mayUseUnsignedRequestObjectByReference(client: Client): boolean {
  return client.profile !== 'fapi2' && client.requireSignedRequestObject !== true;
}

/**
 * An unsigned (`alg: none`) request object fetched from one of `client`'s registered `request_uris`
 * (the only caller is request-uri.ts; by value and at PAR `verifyRequestObject` refuses `none`).
 * OIDC Core §6.2 and §15.2 make `request_uri` mandatory for dynamic OPs, and §6.1 lets its object
 * be unsigned: its integrity rests on the client's pre-registered URL, fetched under the same
 * guards as signed ones. RFC 9101 §10.2's concern with `none` is met by never accepting it by value
 * (where anyone holding a browser could forge it) nor from clients that asked for signed objects.
 */
export function verifyUnsignedRequestObjectByReference(
  requestObject: string,
  client: Client,
  deps: Pick<RequestObjectDeps, 'issuer' | 'clock'>,
): RequestObjectParams {
  if (!mayUseUnsignedRequestObjectByReference(client))
    throw invalidRequestObject('alg none not allowed for this client');
  if (requestObject.length > MAX_REQUEST_OBJECT_LENGTH) throw invalidRequestObject('too large');
  let payload: JWTPayload;
  try {
    ({ payload } = UnsecuredJWT.decode(requestObject, {
      currentDate: new Date(deps.clock.nowSeconds() * 1000),
      clockTolerance: JWT_CLOCK_SKEW_SECONDS,
    }));
  } catch (error) {
    throw invalidRequestObject(`rejected: ${(error as { code?: string }).code ?? 'invalid'}`);
  }
  return checkUnsignedRequestObjectClaims(payload, { clientId: client.clientId, issuer: deps.issuer });
}

/** A request object's parameters as single values plus the RFC 8707 `resource` list. */
export function splitRequestObjectParams(params: RequestObjectParams): {
  params: Record<string, string>;
  resources: string[];
} {
  const single: Record<string, string> = {};
  let resources: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (name === 'resource') resources = typeof value === 'string' ? [value] : value;
    else if (typeof value === 'string') single[name] = value;
  }
  return { params: single, resources };
}

/**
 * /authorize with `request` (RFC 9101 §5): the parameters of the verified object (with the outer
 * `client_id`), or `null` when the request has none. The object is checked before its redirect
 * URI is trusted, so every failure is shown on an error page (`AuthorizationRequestError` without
 * a target), never redirected.
 */
export async function resolveAuthorizationRequestObject(
  params: AuthorizationParams,
  deps: RequestObjectDeps & { clients: ClientStore },
): Promise<AuthorizationParams | null> {
  const requestObject = params.request;
  if (requestObject === undefined || requestObject === '') return null;
  const unredirectable = (error: OAuthError) => new AuthorizationRequestError(error, null);
  if (typeof requestObject !== 'string') throw unredirectable(invalidRequest('request is repeated'));
  const clientId = params.client_id;
  // RFC 9101 §5: "client_id … MUST" also be sent outside the object.
  if (typeof clientId !== 'string' || clientId === '') {
    throw unredirectable(invalidRequest('client_id is required with request'));
  }
  const client = await deps.clients.findClient(clientId);
  if (client === null) throw unredirectable(invalidRequest('unknown client_id'));
  try {
    return await verifyRequestObject(requestObject, client, deps);
  } catch (error) {
    if (error instanceof OAuthError) throw unredirectable(error);
    throw error;
  }
}
