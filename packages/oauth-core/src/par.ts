import {
  type AuthorizationParams,
  type AuthorizationRequest,
  AuthorizationRequestError,
  validateAuthorizationRequest,
} from './authorization.js';
import { invalidRequest, OAuthError } from './errors.js';
import type { Client } from './model.js';
import type { Clock, RandomSource } from './runtime.js';
import type { ClientStore, ResourceStore } from './storage/index.js';
import type { PushedAuthorizationRequestStore } from './storage/pushed-authorization-requests.js';
import { generateOpaqueToken, hashToken } from './tokens/opaque.js';

/**
 * RFC 9126 Pushed Authorization Requests: the client POSTs the authorization request to the PAR
 * endpoint (authenticated like at the token endpoint) and gets a `request_uri`; the browser then
 * carries only `client_id` and `request_uri` to /authorize, which takes the pushed parameters.
 */

/** RFC 9126 §2.2: "urn:ietf:params:oauth:request_uri:" followed by a random reference. */
export const PAR_REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** RFC 9126 §2.2: a short lifetime ("between 5 and 600 seconds" is the suggestion). */
export const DEFAULT_PAR_TTL_SECONDS = 60;
/**
 * How long a request is kept past its expiry: an authorization opened at /authorize just before
 * the request expired may still complete (and must then find it, to spend it) while its
 * interaction lives, at most this long.
 */
export const PAR_RETENTION_AFTER_EXPIRY_SECONDS = 3600;

export interface PushedAuthorizationResponse {
  request_uri: string;
  expires_in: number;
}

export interface PushAuthorizationContext {
  store: PushedAuthorizationRequestStore;
  clients: ClientStore;
  resources: ResourceStore;
  clock: Clock;
  random: RandomSource;
  ttlSeconds?: number;
}

/** RFC 9126 §2.3: PAR errors are JSON, never redirects; the validation error's code is kept. */
function asPushError(error: unknown): unknown {
  return error instanceof AuthorizationRequestError ? error.error : error;
}

/**
 * The PAR endpoint after client authentication (RFC 9126 §2.1): `params` are the form parameters
 * (single values), `resources` the RFC 8707 `resource` values. The request is validated exactly as
 * /authorize would (errors keep their code: `invalid_request`, `invalid_scope`, `invalid_target`…),
 * then stored under the hash of a fresh `request_uri`, openable for `ttlSeconds`, used up by the
 * code it leads to.
 */
export async function pushAuthorizationRequest(
  input: { client: Client; params: Readonly<Record<string, string>>; resources: readonly string[] },
  context: PushAuthorizationContext,
): Promise<PushedAuthorizationResponse> {
  const { client, params } = input;
  // §2.1: "The request_uri authorization request parameter is one exception, and it MUST NOT be provided."
  if (params.request_uri !== undefined) throw invalidRequest('request_uri must not be pushed');
  // §2.1: the client_id in the body, when sent, names the authenticated client.
  if (params.client_id !== undefined && params.client_id !== client.clientId) {
    throw invalidRequest('client_id does not match the authenticated client');
  }
  const single: Record<string, string> = { ...params, client_id: client.clientId };
  try {
    await validateAuthorizationRequest(
      { ...single, resource: [...input.resources] },
      { clients: context.clients, resources: context.resources },
    );
  } catch (error) {
    throw asPushError(error);
  }

  const now = context.clock.nowSeconds();
  const ttl = context.ttlSeconds ?? DEFAULT_PAR_TTL_SECONDS;
  const requestUri = `${PAR_REQUEST_URI_PREFIX}${generateOpaqueToken(context.random)}`;
  // Housekeeping on the write path keeps the table small without a scheduler.
  await context.store.deleteExpiredPushedAuthorizationRequests(now - PAR_RETENTION_AFTER_EXPIRY_SECONDS);
  await context.store.savePushedAuthorizationRequest({
    requestUriHash: hashToken(requestUri),
    clientId: client.clientId,
    params: single,
    resources: [...new Set(input.resources)],
    createdAt: now,
    expiresAt: now + ttl,
    usedAt: null,
  });
  return { request_uri: requestUri, expires_in: ttl };
}

const unredirectable = (error: OAuthError) => new AuthorizationRequestError(error, null);

/** A pushed request resolved at /authorize: its parameters, and the key that spends it later. */
export interface ResolvedPushedRequest {
  params: AuthorizationParams;
  requestUriHash: string;
}

const requestUriUnusable = (clientId: string, reason: string) =>
  unredirectable(
    new OAuthError('invalid_request_uri', {
      description: 'the request_uri is unknown, expired or was already used',
      detail: `client ${clientId.slice(0, 100)}: ${reason}`,
    }),
  );

/**
 * /authorize with `request_uri` (RFC 9126 §4): returns the pushed parameters, or `null` when the
 * request carries no `request_uri` or one that is not PAR's URN (a URL, `resolveRequestUriByReference`). Reading does not spend the request: a reload, a second tab or
 * a browser retrying before sign-in opens it again; the code spends it
 * (`spendPushedAuthorizationRequest`). The other parameters of the request are ignored: only what
 * was pushed (and validated, and authenticated) counts. A missing `client_id`, an unknown,
 * expired, used or other client's `request_uri` cannot be redirected (the redirect URI is in the
 * pushed request) → `AuthorizationRequestError` with `invalid_request_uri` (RFC 9101 §7) or
 * `invalid_request`, shown on an error page.
 */
export async function resolvePushedAuthorizationRequest(
  params: AuthorizationParams,
  context: { store: PushedAuthorizationRequestStore; clock: Clock },
): Promise<ResolvedPushedRequest | null> {
  const requestUri = params.request_uri;
  if (requestUri === undefined || requestUri === '') return null;
  if (typeof requestUri !== 'string') throw unredirectable(invalidRequest('request_uri is repeated'));
  // Any other request_uri is a URL the client hosts (RFC 9101 §5.2, request-uri.ts).
  if (!requestUri.startsWith(PAR_REQUEST_URI_PREFIX)) return null;
  const clientId = params.client_id;
  if (typeof clientId !== 'string' || clientId === '') {
    throw unredirectable(invalidRequest('client_id is required with request_uri'));
  }
  const requestUriHash = hashToken(requestUri);
  const pushed = await context.store.findPushedAuthorizationRequest(
    requestUriHash,
    clientId,
    context.clock.nowSeconds(),
  );
  if (pushed === null) throw requestUriUnusable(clientId, 'not found');
  return { params: { ...pushed.params, resource: [...pushed.resources] }, requestUriHash };
}

/**
 * Spends the pushed request right before its code is issued. RFC 9126 §7.3 (replay): the request
 * is "one-time use"; FAPI 2.0 SP §5.3.2.2 ties that to issuing the code. One conditional update
 * in the shared store, so of two browsers (or instances) finishing the same request only one gets
 * a code; the other gets the error page.
 */
export async function spendPushedAuthorizationRequest(
  requestUriHash: string,
  clientId: string,
  context: { store: PushedAuthorizationRequestStore; clock: Clock },
): Promise<void> {
  const now = context.clock.nowSeconds();
  if (!(await context.store.markPushedAuthorizationRequestUsed(requestUriHash, clientId, now))) {
    throw requestUriUnusable(clientId, 'already used');
  }
}

/**
 * RFC 9126 §6: a client registered with `require_pushed_authorization_requests` may only start at
 * /authorize with a `request_uri` from the PAR endpoint. Redirectable: the request has been
 * validated, so its redirect URI is trusted.
 */
export function checkPushedAuthorizationRequired(request: AuthorizationRequest, pushed: boolean): void {
  if (pushed || request.client.requirePushedAuthorizationRequests !== true) return;
  throw new AuthorizationRequestError(
    invalidRequest('this client must use pushed authorization requests (RFC 9126)'),
    {
      redirectUri: request.redirectUri,
      state: request.state,
      responseMode: request.responseMode,
      client: request.client,
    },
  );
}

/**
 * RFC 9101 §10.5 `require_signed_request_object`: such a client's request must come as a signed
 * request object, at /authorize or at the PAR endpoint (which refuses it unsigned, so a pushed
 * request counts as signed).
 */
export function checkSignedRequestRequired(request: AuthorizationRequest, signedOrPushed: boolean): void {
  if (signedOrPushed || request.client.requireSignedRequestObject !== true) return;
  throw new AuthorizationRequestError(
    invalidRequest('this client must send a signed request object (RFC 9101)'),
    {
      redirectUri: request.redirectUri,
      state: request.state,
      responseMode: request.responseMode,
      client: request.client,
    },
  );
}
