import { isAdminApiScope } from './admin-api.js';
import { CLIENT_AUTHENTICATION_METHOD_NAMES } from './client-auth-methods.js';
import { OAuthError } from './errors.js';
import type { Client, ClientAuthenticationMethod, GrantType, SigningAlg } from './model.js';
import {
  type ClientMetadata,
  type ClientRegistrationContext,
  clientDefaults,
  clientRegistrationProblems,
  forbiddenGrantReason,
} from './registration.js';

/**
 * OAuth 2.0 Dynamic Client Registration (RFC 7591) and its management protocol (RFC 7592): what a
 * registration request may ask for under the operator's policy, and what the server answers. The
 * client record itself comes from `clientDefaults` and is checked by `clientRegistrationProblems`,
 * the same rules the seed loader applies; this module adds the policy caps and the RFC 7591 §3.2.2
 * error codes. No HTTP, no storage.
 */

/** The operator's policy (seed `client_registration`), already parsed. */
export interface RegistrationPolicy {
  /** What a registered client may ask for at most: `scope` values and grant types. */
  scopes: readonly string[];
  grantTypes: readonly GrantType[];
}

/** RFC 7591 §2: the members a registration may carry, and the JSON type each must have. */
const REGISTRATION_MEMBERS = {
  redirect_uris: 'strings',
  post_logout_redirect_uris: 'strings',
  token_endpoint_auth_method: 'string',
  grant_types: 'strings',
  response_types: 'strings',
  client_name: 'string',
  client_uri: 'string',
  logo_uri: 'string',
  tos_uri: 'string',
  policy_uri: 'string',
  contacts: 'strings',
  scope: 'string',
  software_id: 'string',
  software_version: 'string',
  jwks_uri: 'string',
  request_uris: 'strings',
  jwks: 'object',
  id_token_signed_response_alg: 'string',
  dpop_bound_access_tokens: 'boolean',
  subject_type: 'string',
  userinfo_signed_response_alg: 'string',
} as const;

/** Discovery's `subject_types_supported`: this server gives every client the same `sub` per user. */
const SUBJECT_TYPES = ['public'];

type MemberType = (typeof REGISTRATION_MEMBERS)[keyof typeof REGISTRATION_MEMBERS];
type RegistrationMember = keyof typeof REGISTRATION_MEMBERS;

/**
 * The client metadata as registered (RFC 7591 §3.2.1: the response holds "all registered metadata
 * about the client, including any fields provisioned by the authorization server itself"). Kept
 * as given, so RFC 7592 §2.1 reads answer what was registered.
 */
export type RegisteredMetadata = { [member in RegistrationMember]?: unknown } & {
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: ClientAuthenticationMethod;
  scope: string;
};

/** The authentication methods a registration may choose (the seed-only mTLS and such are not offered). */
export const REGISTRABLE_AUTH_METHODS: readonly ClientAuthenticationMethod[] =
  CLIENT_AUTHENTICATION_METHOD_NAMES.filter((method) =>
    ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'].includes(method),
  );

const invalidMetadata = (description: string) =>
  new OAuthError('invalid_client_metadata', { description, detail: description });
const invalidRedirectUri = (description: string) =>
  new OAuthError('invalid_redirect_uri', { description, detail: description });

/**
 * Reads an RFC 7591 §2 registration request against `policy`: the registered metadata with the
 * server's defaults filled in, or the RFC 7591 §3.2.2 error. Unknown members are ignored (§2: the
 * server "MUST ignore any client metadata sent by the client that it does not understand").
 */
export function readRegistrationRequest(body: unknown, policy: RegistrationPolicy): RegisteredMetadata {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidMetadata('the registration request must be a JSON object');
  }
  const request = body as Record<string, unknown>;
  if (request.software_statement !== undefined) {
    // RFC 7591 §3.2.2: this server approves no software statement (§2.3), whoever signed it.
    throw new OAuthError('unapproved_software_statement', {
      description: 'software statements are not accepted by this server; register without one',
    });
  }
  const given = typedMembers(request);
  const grantTypes = (given.grant_types as string[] | undefined) ?? ['authorization_code'];
  const metadata: RegisteredMetadata = {
    ...given,
    redirect_uris: (given.redirect_uris as string[] | undefined) ?? [],
    grant_types: grantTypes,
    // RFC 7591 §2: response_types defaults to `code`.
    response_types: (given.response_types as string[] | undefined) ?? ['code'],
    // RFC 7591 §2: token_endpoint_auth_method defaults to client_secret_basic.
    token_endpoint_auth_method: authMethod(given.token_endpoint_auth_method),
    scope: cappedScope(given.scope as string | undefined, policy),
  };
  checkGrantTypes(metadata, policy);
  checkSubjectType(metadata.subject_type);
  // RFC 7591 §2: clients using redirect-based flows MUST register their redirection URIs.
  if (metadata.grant_types.includes('authorization_code') && metadata.redirect_uris.length === 0) {
    throw invalidRedirectUri('redirect_uris is required for the authorization_code grant');
  }
  for (const uri of metadata.redirect_uris) checkRedirectUri(uri);
  return metadata;
}

function typedMembers(request: Record<string, unknown>): Partial<Record<RegistrationMember, unknown>> {
  const given: Partial<Record<RegistrationMember, unknown>> = {};
  for (const [member, type] of Object.entries(REGISTRATION_MEMBERS) as [RegistrationMember, MemberType][]) {
    const value = request[member];
    if (value === undefined) continue;
    if (!hasType(value, type)) throw invalidMetadata(`${member} must be ${describeType(type)}`);
    given[member] = value;
  }
  return given;
}

function hasType(value: unknown, type: MemberType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string' && value.length > 0 && value.length <= 2048;
    case 'strings':
      return (
        Array.isArray(value) &&
        value.length <= 20 &&
        value.every((item) => typeof item === 'string' && item.length > 0 && item.length <= 2048)
      );
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

const describeType = (type: MemberType) =>
  ({
    string: 'a non-empty string',
    strings: 'an array of strings',
    boolean: 'a boolean',
    object: 'an object',
  })[type];

function authMethod(value: unknown): ClientAuthenticationMethod {
  if (value === undefined) return 'client_secret_basic';
  const method = REGISTRABLE_AUTH_METHODS.find((candidate) => candidate === value);
  if (method === undefined) {
    throw invalidMetadata(`token_endpoint_auth_method must be one of ${REGISTRABLE_AUTH_METHODS.join(', ')}`);
  }
  return method;
}

/** RFC 7591 §2 `scope`: the policy's scopes when none is asked; asking beyond them is refused. */
function cappedScope(requested: string | undefined, policy: RegistrationPolicy): string {
  if (requested === undefined) return policy.scopes.filter((scope) => !isAdminApiScope(scope)).join(' ');
  const scopes = requested.split(' ').filter((scope) => scope !== '');
  // The administration API's scopes are the seed file's to give (src/admin-api.ts), whatever the policy says.
  const beyond = scopes.filter((scope) => !policy.scopes.includes(scope) || isAdminApiScope(scope));
  if (beyond.length > 0) throw invalidMetadata(`scope ${beyond.join(' ')} may not be registered here`);
  return [...new Set(scopes)].join(' ');
}

/**
 * Grant types within the policy, and RFC 7591 §2.1: `grant_types` and `response_types` must agree
 * (`code` if and only if `authorization_code`); this server offers no other response type.
 */
function checkGrantTypes(metadata: RegisteredMetadata, policy: RegistrationPolicy): void {
  for (const grant of metadata.grant_types) {
    const forbidden = forbiddenGrantReason(grant);
    if (forbidden !== undefined) throw invalidMetadata(forbidden);
    if (!(policy.grantTypes as readonly string[]).includes(grant)) {
      throw invalidMetadata(`grant type ${grant} may not be registered here`);
    }
  }
  if (metadata.response_types.some((type) => type !== 'code')) {
    throw invalidMetadata('response_types may only hold code');
  }
  const usesCode = metadata.grant_types.includes('authorization_code');
  if (usesCode !== metadata.response_types.includes('code')) {
    throw invalidMetadata('response_types code goes with the authorization_code grant type (RFC 7591 §2.1)');
  }
}

/**
 * RFC 6749 §3.1.2 and RFC 8252 §7: an absolute URI without a fragment; `https`, `http` only on a
 * loopback IP literal or `localhost` (a native app's own listener), or a private-use scheme named
 * after a domain (`com.example.app:`).
 */
function checkRedirectUri(uri: string): void {
  if (!URL.canParse(uri) || uri.includes('#')) {
    throw invalidRedirectUri(`redirect URI ${uri} is not an absolute URI without a fragment`);
  }
  const { protocol, hostname } = new URL(uri);
  if (protocol === 'https:') return;
  if (protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(hostname)) return;
  if (protocol !== 'http:' && protocol.slice(0, -1).includes('.')) return;
  throw invalidRedirectUri(`redirect URI ${uri} must use https (http only on a loopback address)`);
}

/**
 * OpenID Connect Dynamic Client Registration 1.0 §2 `subject_type`: one of the server's
 * `subject_types_supported`. A `pairwise` request is refused rather than registered with public
 * identifiers the client did not ask for (its `sector_identifier_uri` is then never fetched).
 */
function checkSubjectType(subjectType: unknown): void {
  if (subjectType === undefined || SUBJECT_TYPES.includes(subjectType as string)) return;
  throw invalidMetadata(`subject_type must be one of ${SUBJECT_TYPES.join(', ')}; pairwise is not offered`);
}

/** RFC 7591 §3.2.1: a client needs a secret exactly when it authenticates with one. */
export function needsClientSecret(metadata: RegisteredMetadata): boolean {
  return (
    metadata.token_endpoint_auth_method === 'client_secret_basic' ||
    metadata.token_endpoint_auth_method === 'client_secret_post'
  );
}

/**
 * The client record for `metadata` under `clientId`, by the same defaults and checks as a seed
 * client; a problem becomes `invalid_redirect_uri` when it concerns the redirect URIs, else
 * `invalid_client_metadata` (RFC 7591 §3.2.2). Consent is never skipped for a registered client.
 */
export function registeredClient(
  clientId: string,
  metadata: RegisteredMetadata,
  context: ClientRegistrationContext,
): Client {
  const client = clientDefaults(toClientMetadata(clientId, metadata), context);
  const [problem] = clientRegistrationProblems(client);
  if (problem !== undefined) {
    const text = problem.member === undefined ? problem.problem : `${problem.member}: ${problem.problem}`;
    throw problem.member === 'redirect_uris' ? invalidRedirectUri(text) : invalidMetadata(text);
  }
  return client;
}

function toClientMetadata(clientId: string, metadata: RegisteredMetadata): ClientMetadata {
  const optional = <T>(member: RegistrationMember) => metadata[member] as T | undefined;
  const jwks = optional<{ keys?: unknown }>('jwks');
  if (jwks !== undefined && !Array.isArray(jwks.keys)) throw invalidMetadata('jwks must hold a keys array');
  const alg = signingAlgMember(metadata, 'id_token_signed_response_alg');
  // OIDC Dynamic Client Registration §2: the UserInfo response is then "JWT serialized", signed with
  // one of the server's keys; `none` (an unsigned JWT) is not offered, as for ID tokens.
  const userinfoAlg = signingAlgMember(metadata, 'userinfo_signed_response_alg');
  const clientMetadata: ClientMetadata = {
    client_id: clientId,
    redirect_uris: metadata.redirect_uris,
    grant_types: metadata.grant_types as GrantType[],
    scope: metadata.scope,
    token_endpoint_auth_method: metadata.token_endpoint_auth_method,
    skip_consent: false,
  };
  const assign = <K extends keyof ClientMetadata>(member: K, value: ClientMetadata[K] | undefined) => {
    if (value !== undefined) clientMetadata[member] = value;
  };
  assign('client_name', optional<string>('client_name'));
  assign('post_logout_redirect_uris', optional<string[]>('post_logout_redirect_uris'));
  assign('jwks_uri', optional<string>('jwks_uri'));
  assign('request_uris', optional<string[]>('request_uris'));
  assign('jwks', jwks as ClientMetadata['jwks']);
  assign('id_token_signed_response_alg', alg);
  assign('userinfo_signed_response_alg', userinfoAlg);
  assign('dpop_bound_access_tokens', optional<boolean>('dpop_bound_access_tokens'));
  return clientMetadata;
}

/** The algorithms the server's keys sign with (discovery's `*_signing_alg_values_supported`). */
const SIGNED_RESPONSE_ALGS: readonly SigningAlg[] = ['RS256', 'ES256'];

/** A `*_signed_response_alg` member: one of `SIGNED_RESPONSE_ALGS`, else `invalid_client_metadata`. */
function signingAlgMember(metadata: RegisteredMetadata, member: RegistrationMember): SigningAlg | undefined {
  const value = metadata[member];
  if (value === undefined) return undefined;
  const alg = SIGNED_RESPONSE_ALGS.find((candidate) => candidate === value);
  if (alg === undefined) throw invalidMetadata(`${member} must be ${SIGNED_RESPONSE_ALGS.join(' or ')}`);
  return alg;
}

/**
 * RFC 7592 §2.2: an update names the same `client_id` (and, when sent, the same `client_secret`);
 * it may not carry the server-issued members, which the server alone sets.
 */
export function checkUpdateIdentity(body: unknown, clientId: string): void {
  const request = (body ?? {}) as Record<string, unknown>;
  if (request.client_id !== clientId) {
    throw new OAuthError('invalid_request', { description: 'client_id must be that of the registration' });
  }
  for (const member of [
    'registration_access_token',
    'registration_client_uri',
    'client_secret_expires_at',
    'client_id_issued_at',
  ]) {
    if (request[member] !== undefined) {
      throw new OAuthError('invalid_request', { description: `${member} is set by the server only` });
    }
  }
}

export interface RegistrationCredentials {
  clientId: string;
  /** Only when the client authenticates with a secret; shown once, stored hashed. */
  clientSecret?: string;
  /** RFC 7592 §3: the bearer token of the management endpoint; shown once, stored hashed. */
  registrationAccessToken?: string;
  registrationClientUri: string;
  issuedAt: number;
}

/** RFC 7591 §3.2.1 / RFC 7592 §3: the client information response. */
export function registrationResponse(metadata: RegisteredMetadata, credentials: RegistrationCredentials) {
  return {
    client_id: credentials.clientId,
    ...(credentials.clientSecret === undefined
      ? {}
      : // RFC 7591 §3.2.1: 0 means the secret does not expire.
        { client_secret: credentials.clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: credentials.issuedAt,
    ...(credentials.registrationAccessToken === undefined
      ? {}
      : { registration_access_token: credentials.registrationAccessToken }),
    registration_client_uri: credentials.registrationClientUri,
    ...metadata,
  };
}
