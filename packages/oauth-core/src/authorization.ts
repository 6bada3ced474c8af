import { isPublicClient } from './client-auth-methods.js';
import type { ProtocolConfig } from './config.js';
import {
  invalidRequest,
  invalidScope,
  invalidTarget,
  OAuthError,
  unauthorizedClient,
  unsupportedResponseType,
} from './errors.js';
import { authorizationCodeTtlFor } from './fapi2.js';
import { storeGrantWithCode } from './grants/redemption.js';
import { generateUuid } from './ids.js';
import { type AuthorizationSubject, type Client, GRANT_TYPES } from './model.js';
import { isValidCodeChallenge } from './pkce.js';
import { isRegisteredRedirectUri } from './redirect-uri.js';
import { decideResponseMode, type ResponseMode, type ResponseSigningClient } from './response-modes.js';
import type { Clock, RandomSource } from './runtime.js';
import { grantableScopes, parseScope } from './scopes.js';
import type { ClientStore, ProtocolStores, ResourceStore } from './storage/index.js';
import { generateOpaqueToken, hashToken } from './tokens/opaque.js';

/**
 * The /authorize query (GET) or form body (POST) as parsed: a repeated parameter arrives as an
 * array. RFC 8707 `resource` is the one parameter that may repeat (string or array).
 */
export type AuthorizationParams = Readonly<Record<string, string | readonly string[] | undefined>>;

/** OpenID Connect Core §3.1.2.1 `prompt` values this server honours. */
export type PromptValue = 'none' | 'login' | 'consent' | 'select_account';

/** A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, RFC 7636, RFC 8707). */
export interface AuthorizationRequest {
  client: Client;
  /** Exactly one of the client's registered redirect URIs. */
  redirectUri: string;
  responseType: 'code';
  /** The mode the response travels in (response-modes.ts); a JWT mode signs it (JARM). */
  responseMode: ResponseMode;
  /** Requested scopes, each allowed for the client (the user's restriction applies at issuance). */
  scopes: string[];
  state: string | null;
  nonce: string | null;
  /** RFC 7636 S256 challenge; `null` only for a confidential client that sent none. */
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  /** Distinct values; `none` never appears with another. */
  prompt: PromptValue[];
  /** OIDC `max_age`, seconds; `null` when absent. */
  maxAge: number | null;
  /** RFC 8707 resources, each known. */
  resources: string[];
  loginHint: string | null;
  /** OIDC Core §3.1.2.1 `acr_values`, space-separated, in order of preference (may be empty). */
  acrValues: string[];
  /** RFC 9449 §10 `dpop_jkt`: the code is bound to this DPoP key thumbprint. */
  dpopJkt: string | null;
}

export interface AuthorizationRequestDeps {
  clients: ClientStore;
  resources: ResourceStore;
}

/** Where a redirectable error goes: the trusted redirect URI, in the request's response mode. */
export interface AuthorizationErrorTarget {
  redirectUri: string;
  state: string | null;
  responseMode: ResponseMode;
  /** The client, for a signed (JARM) error response: its `aud` and algorithm. */
  client: ResponseSigningClient;
}

/**
 * A failed authorization request. When `redirectable` is `false` (unknown client, missing or
 * unregistered redirect_uri) the server MUST NOT redirect (RFC 6749 §4.1.2.1) and shows an error
 * page; otherwise it sends `error`, `error_description`, `state` and `iss` (RFC 9207) to
 * `redirectUri` with `responseMode` (see `redirectParameters`), signed when the mode is a JWT one.
 */
export class AuthorizationRequestError extends Error {
  readonly error: OAuthError;
  readonly redirectable: boolean;
  readonly redirectUri: string | null;
  readonly state: string | null;
  readonly responseMode: ResponseMode;
  readonly client: ResponseSigningClient | null;

  constructor(error: OAuthError, target: AuthorizationErrorTarget | null) {
    super(error.description ?? error.code, { cause: error });
    this.name = 'AuthorizationRequestError';
    this.error = error;
    this.redirectable = target !== null;
    this.redirectUri = target?.redirectUri ?? null;
    this.state = target?.state ?? null;
    this.responseMode = target?.responseMode ?? 'query';
    this.client = target?.client ?? null;
  }

  /** RFC 6749 §4.1.2.1 error response parameters plus RFC 9207 `iss`. */
  redirectParameters(issuer: string): Record<string, string> {
    const params: Record<string, string> = { error: this.error.code };
    if (this.error.description !== undefined) params.error_description = this.error.description;
    if (this.state !== null) params.state = this.state;
    params.iss = issuer;
    return params;
  }
}

/** OIDC Core §3.1.2.1 `prompt` values accepted here; discovery publishes exactly these. */
export const PROMPT_VALUES_SUPPORTED: readonly PromptValue[] = ['none', 'login', 'consent', 'select_account'];
const MAX_AGE = /^(0|[1-9][0-9]{0,9})$/;
const DPOP_JKT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Validates an authorization request, in this order:
 * 1. `client_id` (known) and `redirect_uri` (present, registered: `isRegisteredRedirectUri`): errors
 *    here are NOT redirectable (RFC 6749 §4.1.2.1). Repeating either is also unredirectable.
 * 2. Everything else is redirectable, carrying `state` and the response mode: a repeated parameter
 *    (RFC 6749 §3.1) → invalid_request; `request`/`request_uri` objects → invalid_request (not
 *    supported); `response_type` must be `code` (→ unsupported_response_type); `response_mode`
 *    one of response-modes.ts's table, a JWT one for a client that must receive signed responses
 *    (→ invalid_request, itself answered signed); the client must have the authorization_code grant (→ unauthorized_client);
 *    `scope` present and each allowed to the client (→ invalid_scope, RFC 6749 §3.3); PKCE S256
 *    only and required for public clients (RFC 9700 §2.1.1); `prompt`; `max_age`; `resource` known
 *    (→ invalid_target, RFC 8707 §2).
 */
export async function validateAuthorizationRequest(
  params: AuthorizationParams,
  deps: AuthorizationRequestDeps,
): Promise<AuthorizationRequest> {
  // 1. Who is asking and where to answer: nothing is redirected until both are trusted.
  const { client, redirectUri } = await trustedClientAndRedirectUri(params, deps.clients);

  // 2. From here on, errors go back to the client.
  const state = isRepeated(params, 'state') ? null : (singleParameter(params, 'state') ?? null);
  const { mode: responseMode, problem: responseModeProblem } = decideResponseMode(
    singleParameter(params, 'response_mode'),
    client,
  );
  const fail: Fail = (error) =>
    new AuthorizationRequestError(error, { redirectUri, state, responseMode, client });

  rejectRepeatedAndNestedParameters(params, fail);
  checkResponseTypeAndMode(params, client, responseModeProblem, fail);
  const scopes = requestedScopes(params, client, fail);
  const codeChallenge = checkedCodeChallenge(params, client, fail);
  const prompt = parsePrompt(params, fail);
  const dpopJkt = parseDpopJkt(params, fail);
  const maxAge = parseMaxAge(params, fail);
  const resources = await knownResources(params, deps.resources, fail);

  return {
    client,
    redirectUri,
    responseType: 'code',
    responseMode,
    scopes,
    state,
    nonce: singleParameter(params, 'nonce') ?? null,
    codeChallenge,
    codeChallengeMethod: codeChallenge === null ? null : 'S256',
    prompt,
    maxAge,
    resources,
    loginHint: singleParameter(params, 'login_hint') ?? null,
    acrValues: (singleParameter(params, 'acr_values') ?? '').split(' ').filter((value) => value !== ''),
    dpopJkt,
  };
}

/** Wraps an error of a redirectable check with the request's redirect target. */
type Fail = (error: OAuthError) => AuthorizationRequestError;

/** A parameter's single value; `undefined` when absent, empty or repeated. */
function singleParameter(params: AuthorizationParams, name: string): string | undefined {
  const value = params[name];
  if (typeof value !== 'string') return undefined;
  // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted."
  return value === '' ? undefined : value;
}

function isRepeated(params: AuthorizationParams, name: string): boolean {
  const value = params[name];
  return Array.isArray(value) && value.length > 1;
}

/**
 * `client_id` (known) and `redirect_uri` (present, registered). Their errors are NOT redirectable
 * (RFC 6749 §4.1.2.1): the server cannot trust the place it would send them.
 */
async function trustedClientAndRedirectUri(
  params: AuthorizationParams,
  clients: ClientStore,
): Promise<{ client: Client; redirectUri: string }> {
  const unredirectable = (error: OAuthError) => new AuthorizationRequestError(error, null);
  if (isRepeated(params, 'client_id')) throw unredirectable(invalidRequest('client_id is repeated'));
  const clientId = singleParameter(params, 'client_id');
  if (clientId === undefined) throw unredirectable(invalidRequest('client_id is required'));
  const client = await clients.findClient(clientId);
  if (client === null) {
    throw unredirectable(
      new OAuthError('invalid_request', { description: 'unknown client_id', detail: clientId.slice(0, 100) }),
    );
  }
  if (isRepeated(params, 'redirect_uri')) throw unredirectable(invalidRequest('redirect_uri is repeated'));
  const redirectUri = singleParameter(params, 'redirect_uri');
  if (redirectUri === undefined) throw unredirectable(invalidRequest('redirect_uri is required'));
  // RFC 9700 §4.1.3: exact string comparison, no pattern or prefix matching (but the port of a
  // public client's loopback IP redirect URI, RFC 8252 §7.3).
  if (!isRegisteredRedirectUri(client, redirectUri)) {
    throw unredirectable(invalidRequest('redirect_uri is not registered for this client'));
  }
  return { client, redirectUri };
}

function rejectRepeatedAndNestedParameters(params: AuthorizationParams, fail: Fail): void {
  // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once."
  for (const [name, value] of Object.entries(params)) {
    if (name !== 'resource' && Array.isArray(value) && value.length > 1) {
      throw fail(invalidRequest(`${name.slice(0, 50)} is repeated`));
    }
  }
  // A request object (RFC 9101) or request_uri (RFC 9126) was resolved before validation; one left
  // here came from inside another request object or a pushed request.
  if (singleParameter(params, 'request') !== undefined)
    throw fail(invalidRequest('request objects cannot be nested'));
  if (singleParameter(params, 'request_uri') !== undefined)
    throw fail(invalidRequest('request_uri is only accepted from PAR'));
}

function checkResponseTypeAndMode(
  params: AuthorizationParams,
  client: Client,
  responseModeProblem: string | null,
  fail: Fail,
): void {
  const responseType = singleParameter(params, 'response_type');
  if (responseType === undefined) throw fail(invalidRequest('response_type is required'));
  // Only the authorization code flow: implicit and hybrid are gone (RFC 9700 §2.1.2).
  if (responseType !== 'code')
    throw fail(unsupportedResponseType(`response_type=${responseType.slice(0, 50)}`));
  if (responseModeProblem !== null) throw fail(invalidRequest(responseModeProblem));
  if (!client.grantTypes.includes(GRANT_TYPES.authorizationCode)) {
    throw fail(unauthorizedClient('client lacks the authorization_code grant'));
  }
}

function requestedScopes(params: AuthorizationParams, client: Client, fail: Fail): string[] {
  let scopes: string[];
  try {
    scopes = parseScope(singleParameter(params, 'scope'));
  } catch (error) {
    throw fail(error as OAuthError);
  }
  // RFC 6749 §3.3: without a default scope the server fails the request with invalid_scope.
  if (scopes.length === 0) throw fail(invalidScope('scope is required'));
  if (scopes.some((scope) => !client.scopes.includes(scope)))
    throw fail(invalidScope('scope not allowed for the client'));
  return scopes;
}

/** The RFC 7636 S256 challenge, or `null` when a client that may go without PKCE sent none. */
function checkedCodeChallenge(params: AuthorizationParams, client: Client, fail: Fail): string | null {
  const codeChallenge = singleParameter(params, 'code_challenge') ?? null;
  const method = singleParameter(params, 'code_challenge_method');
  if (codeChallenge === null) {
    if (method !== undefined) throw fail(invalidRequest('code_challenge_method without code_challenge'));
    // RFC 9700 §2.1.1: public clients MUST use PKCE; FAPI 2.0 Security Profile §5.3.2.2: every client.
    if (isPublicClient(client) || client.profile === 'fapi2') {
      throw fail(invalidRequest('code_challenge is required (PKCE)'));
    }
  } else {
    // RFC 7636 §4.3: a missing method means plain, which this server refuses (RFC 9700 §2.1.1).
    if (method !== 'S256') throw fail(invalidRequest('code_challenge_method must be S256'));
    if (!isValidCodeChallenge(codeChallenge)) throw fail(invalidRequest('code_challenge is malformed'));
  }
  return codeChallenge;
}

/** OIDC Core §3.1.2.1 `prompt`: distinct supported values. */
function parsePrompt(params: AuthorizationParams, fail: Fail): PromptValue[] {
  const prompt: PromptValue[] = [];
  for (const value of (singleParameter(params, 'prompt') ?? '').split(' ')) {
    if (value === '') continue;
    if (!PROMPT_VALUES_SUPPORTED.includes(value as PromptValue))
      throw fail(invalidRequest('unsupported prompt value'));
    if (!prompt.includes(value as PromptValue)) prompt.push(value as PromptValue);
  }
  // OIDC Core §3.1.2.1: "If this parameter contains none with any other value, an error is returned."
  if (prompt.includes('none') && prompt.length > 1)
    throw fail(invalidRequest('prompt=none with other values'));
  return prompt;
}

function parseDpopJkt(params: AuthorizationParams, fail: Fail): string | null {
  const dpopJkt = singleParameter(params, 'dpop_jkt') ?? null;
  // RFC 9449 §10: the base64url SHA-256 thumbprint (RFC 7638) of the key, 43 characters.
  if (dpopJkt !== null && !DPOP_JKT.test(dpopJkt)) throw fail(invalidRequest('dpop_jkt is malformed'));
  return dpopJkt;
}

function parseMaxAge(params: AuthorizationParams, fail: Fail): number | null {
  const maxAgeParam = singleParameter(params, 'max_age');
  if (maxAgeParam !== undefined && !MAX_AGE.test(maxAgeParam))
    throw fail(invalidRequest('max_age must be a non-negative integer'));
  return maxAgeParam === undefined ? null : Number(maxAgeParam);
}

/** RFC 8707 `resource` values (the one parameter that may repeat), each known, without duplicates. */
async function knownResources(
  params: AuthorizationParams,
  resourceStore: ResourceStore,
  fail: Fail,
): Promise<string[]> {
  const resourceParam = params.resource;
  const requested = (typeof resourceParam === 'string' ? [resourceParam] : [...(resourceParam ?? [])]).filter(
    (value) => value !== '',
  );
  const resources: string[] = [];
  for (const id of requested) {
    // RFC 8707 §2: an unknown or unacceptable resource → invalid_target.
    if ((await resourceStore.findResource(id)) === null)
      throw fail(invalidTarget(`unknown resource ${id.slice(0, 200)}`));
    if (!resources.includes(id)) resources.push(id);
  }
  return resources;
}

export interface AuthorizationCodeContext {
  stores: ProtocolStores;
  clock: Clock;
  random: RandomSource;
  config: ProtocolConfig;
}

export interface IssuedAuthorizationCode {
  /** The clear code for the redirect; only its hash is stored. */
  code: string;
  grantId: string;
  expiresAt: number;
  scopes: string[];
}

/**
 * Creates the Grant and its AuthorizationCode in one transaction and returns the clear code
 * (RFC 6749 §4.1.2: short-lived, `config.authorizationCodeTtl`, single-use). Throws a redirectable
 * `AuthorizationRequestError` (`access_denied`) when no requested scope can be granted, or when the
 * user no longer exists.
 */
export async function issueAuthorizationCode(
  request: AuthorizationRequest,
  subject: AuthorizationSubject,
  context: AuthorizationCodeContext,
): Promise<IssuedAuthorizationCode> {
  const { stores, clock, random, config } = context;
  const target = {
    redirectUri: request.redirectUri,
    state: request.state,
    responseMode: request.responseMode,
    client: request.client,
  };
  let scopes: string[];
  if (subject.scopes === undefined) {
    const user = await stores.users.findUserBySub(subject.sub);
    if (user === null) {
      throw new AuthorizationRequestError(
        new OAuthError('access_denied', {
          description: 'the user cannot be authorized',
          detail: 'unknown sub',
        }),
        target,
      );
    }
    scopes = grantableScopes(request.scopes, request.client, user);
  } else {
    // Consent may narrow the request, never widen it.
    scopes = grantableScopes(request.scopes, request.client, null).filter((scope) =>
      subject.scopes!.includes(scope),
    );
  }
  if (scopes.length === 0) {
    throw new AuthorizationRequestError(
      new OAuthError('access_denied', {
        description: 'none of the requested scopes can be granted',
        detail: 'empty grant',
      }),
      target,
    );
  }

  const now = clock.nowSeconds();
  const grantId = generateUuid(random);
  const code = generateOpaqueToken(random);
  const expiresAt = now + authorizationCodeTtlFor(request.client, config.authorizationCodeTtl);
  await storeGrantWithCode(
    stores,
    {
      id: grantId,
      clientId: request.client.clientId,
      sub: subject.sub,
      scopes,
      resources: request.resources,
      sid: subject.sid,
      authTime: subject.authTime,
      amr: subject.amr ?? null,
      acr: subject.acr ?? null,
      createdAt: now,
      revokedAt: null,
    },
    {
      codeHash: hashToken(code),
      grantId,
      clientId: request.client.clientId,
      sub: subject.sub,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      nonce: request.nonce,
      scopes,
      resources: request.resources,
      sid: subject.sid,
      authTime: subject.authTime,
      expiresAt,
      usedAt: null,
      dpopJkt: request.dpopJkt,
    },
  );
  return { code, grantId, expiresAt, scopes };
}
