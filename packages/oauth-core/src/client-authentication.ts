import { decodeJwt } from 'jose';
import {
  CLIENT_ASSERTION_TYPE,
  type ClientAssertionDeps,
  verifyClientAssertion,
} from './client-assertion.js';
import {
  CLIENT_AUTHENTICATION_METHODS,
  type ClientAuthenticationEndpoint,
  clientAuthMethods,
} from './client-auth-methods.js';
import { invalidClient, invalidRequest } from './errors.js';
import type { Client, ClientAuthenticationMethod, Resource } from './model.js';
import type { SecretHasher } from './secrets.js';
import type { ClientStore, ResourceStore } from './storage/index.js';

export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
  /**
   * The same credentials without form-decoding, when that differs: Python's Authlib and
   * requests-oauthlib send `client_id:secret` unencoded, so a secret with `+`, `%`, `:` or a space
   * only matches undecoded (see `authenticateClient`).
   */
  raw?: { clientId: string; clientSecret: string };
}

/** RFC 6749 §2.3.1 / RFC 7617: 'application/x-www-form-urlencoded' decoding of one Basic part. */
function formDecode(value: string): string | null {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * Parses `Authorization: Basic …`. Returns `null` when the header is absent or uses another
 * scheme; throws `invalid_client` when it is Basic but malformed. RFC 6749 §2.3.1: the client id
 * and secret are form-urlencoded before base64, so both are decoded after splitting at the first
 * ':'. The undecoded parts are kept as `raw` when they differ (or when decoding fails).
 */
export function parseBasicAuthorization(header: string | null | undefined): BasicCredentials | null {
  if (header === undefined || header === null) return null;
  const match = /^Basic[ ]+([A-Za-z0-9+/=._~-]*)[ ]*$/i.exec(header.trim());
  if (match === null) {
    if (/^Basic(\s|$)/i.test(header.trim())) throw invalidClient('malformed Basic authorization header');
    return null;
  }
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('Basic credentials without a colon');
  const raw = { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
  const clientId = formDecode(raw.clientId);
  const clientSecret = formDecode(raw.clientSecret);
  if (clientId === null || clientSecret === null) {
    if (raw.clientId === '') throw invalidClient('Basic credentials without a client id');
    // Not form-encoded at all (a lone `%`): only the raw reading can match.
    return { ...raw };
  }
  if (clientId === '') throw invalidClient('Basic credentials without a client id');
  const differs = clientId !== raw.clientId || clientSecret !== raw.clientSecret;
  return differs ? { clientId, clientSecret, raw } : { clientId, clientSecret };
}

export interface ClientAuthenticationInput {
  /** The `Authorization` request header, if sent. */
  authorization?: string | null | undefined;
  /** Form body parameters (`client_id`, `client_secret`, `client_assertion`, …). */
  params: Readonly<Record<string, string | undefined>>;
  /** Where the request arrived; decides which methods are accepted. Default `token`. */
  endpoint?: ClientAuthenticationEndpoint;
}

export interface ClientAuthenticationDeps {
  clients: ClientStore;
  secrets: SecretHasher;
  /** Needed for `private_key_jwt`; without it assertions are refused. */
  assertions?: ClientAssertionDeps & {
    /** The public URL of each endpoint (an accepted assertion `aud`, RFC 7523 §3 item 3). */
    endpointUrls: Readonly<Record<ClientAuthenticationEndpoint, string>>;
  };
}

export interface AuthenticatedClient {
  client: Client;
  /** `true` when the client proved who it is; `false` for a public client identified by `client_id`. */
  authenticated: boolean;
  method: ClientAuthenticationMethod;
}

/** What the request presents, before anything is looked up. */
type PresentedCredentials =
  | {
      method: 'client_secret_basic' | 'client_secret_post';
      candidates: readonly { clientId: string; secret: string }[];
    }
  | { method: 'private_key_jwt'; clientId: string; assertion: string }
  | { method: 'none'; clientId: string };

/**
 * RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request."
 * Basic with `client_secret` or `client_assertion` in the body → `invalid_request`, as is a body
 * `client_id` differing from the Basic one.
 */
function readPresentedCredentials(input: ClientAuthenticationInput): PresentedCredentials {
  const { params } = input;
  const basic = parseBasicAuthorization(input.authorization);
  const assertion = params.client_assertion !== undefined || params.client_assertion_type !== undefined;
  if (basic !== null) {
    if (params.client_secret !== undefined || assertion) {
      throw invalidRequest('use exactly one client authentication method', 'Basic and a body credential');
    }
    if (params.client_id !== undefined && params.client_id !== basic.clientId) {
      if (basic.raw === undefined || params.client_id !== basic.raw.clientId) {
        throw invalidRequest(
          'client_id does not match the authenticated client',
          'Basic and client_id differ',
        );
      }
    }
    const decoded = { clientId: basic.clientId, secret: basic.clientSecret };
    const raw =
      basic.raw === undefined ? [] : [{ clientId: basic.raw.clientId, secret: basic.raw.clientSecret }];
    return { method: 'client_secret_basic', candidates: [decoded, ...raw] };
  }
  if (assertion) return readAssertion(params);
  const clientId = params.client_id;
  if (clientId === undefined || clientId === '') {
    throw invalidClient(
      params.client_secret === undefined ? 'no client authentication' : 'client_secret without client_id',
    );
  }
  if (params.client_secret !== undefined) {
    return { method: 'client_secret_post', candidates: [{ clientId, secret: params.client_secret }] };
  }
  return { method: 'none', clientId };
}

/** RFC 7523 §2.2 / RFC 7521 §4.2: `client_id` is optional; the assertion's `iss` names the client. */
function readAssertion(params: Readonly<Record<string, string | undefined>>): PresentedCredentials {
  if (params.client_secret !== undefined) {
    throw invalidRequest('use exactly one client authentication method', 'assertion and client_secret');
  }
  if (params.client_assertion_type !== CLIENT_ASSERTION_TYPE) {
    throw invalidClient('unsupported client_assertion_type');
  }
  const assertion = params.client_assertion;
  if (assertion === undefined || assertion === '') throw invalidClient('client_assertion is missing');
  let clientId = params.client_id;
  if (clientId === undefined || clientId === '') {
    try {
      clientId = decodeJwt(assertion).iss;
    } catch {
      throw invalidClient('client_assertion is not a JWT');
    }
  }
  if (typeof clientId !== 'string' || clientId === '') throw invalidClient('client_assertion without iss');
  return { method: 'private_key_jwt', clientId, assertion };
}

/**
 * Client authentication at the token, PAR, device authorization, revocation and introspection
 * endpoints (RFC 6749 §2.3, RFC 7523 §2.2):
 * - the method must be accepted at the endpoint (`CLIENT_AUTHENTICATION_METHODS`, which discovery
 *   publishes) and be one of the client's own (`token_endpoint_auth_method`);
 * - a public client sends `client_id` only (method `none`);
 * - secrets are checked in constant time (keyed HMAC, no KDF: the token endpoint is the hot path);
 *   when the form-decoded Basic credentials do not match and the raw ones differ, the raw ones are
 *   checked too (clients that skip RFC 6749 §2.3.1's form-encoding), with the same failure;
 * - `private_key_jwt` verifies the assertion (`verifyClientAssertion`).
 * Every failure of the credentials is `invalid_client` (401 with `WWW-Authenticate`, RFC 6749 §5.2).
 */
export async function authenticateClient(
  input: ClientAuthenticationInput,
  deps: ClientAuthenticationDeps,
): Promise<AuthenticatedClient> {
  const presented = readPresentedCredentials(input);
  const endpoint = input.endpoint ?? 'token';
  if (!CLIENT_AUTHENTICATION_METHODS[presented.method].includes(endpoint)) {
    throw invalidClient(`${presented.method} is not accepted at the ${endpoint} endpoint`);
  }
  switch (presented.method) {
    case 'none': {
      const client = await findClientUsing(presented.clientId, 'none', deps);
      return { client, authenticated: false, method: 'none' };
    }
    case 'private_key_jwt': {
      const client = await findClientUsing(presented.clientId, 'private_key_jwt', deps);
      if (deps.assertions === undefined) throw invalidClient('client assertions are not configured');
      await verifyClientAssertion(
        presented.assertion,
        client,
        deps.assertions.endpointUrls[endpoint],
        deps.assertions,
      );
      return { client, authenticated: true, method: 'private_key_jwt' };
    }
    default: {
      const client = await firstMatchingSecret(presented.candidates, deps);
      if (!clientAuthMethods(client).includes(presented.method)) {
        throw invalidClient(`client is not registered for ${presented.method}`);
      }
      return { client, authenticated: true, method: presented.method };
    }
  }
}

async function findClientUsing(
  clientId: string,
  method: ClientAuthenticationMethod,
  deps: ClientAuthenticationDeps,
): Promise<Client> {
  const client = await deps.clients.findClient(clientId);
  if (client === null) throw invalidClient('unknown client');
  // RFC 7591 §2: the client authenticates with its registered method only.
  if (!clientAuthMethods(client).includes(method)) {
    throw invalidClient(
      method === 'none'
        ? 'confidential client presented no credentials'
        : `client is not registered for ${method}`,
    );
  }
  return client;
}

/** The client whose secret one of the candidates proves (decoded first, then raw), else `invalid_client`. */
async function firstMatchingSecret(
  candidates: readonly { clientId: string; secret: string }[],
  deps: ClientAuthenticationDeps,
): Promise<Client> {
  for (const candidate of candidates) {
    const client = await deps.clients.findClient(candidate.clientId);
    if (client?.secretHash != null && deps.secrets.verify(candidate.secret, client.secretHash)) return client;
  }
  throw invalidClient('unknown client or wrong client secret');
}

/**
 * A resource (API) authenticating at the introspection endpoint with its `id` and `secret`, given
 * as candidates (decoded, then raw; see `authenticateClient`). Unknown resource, a resource without
 * a secret, or a wrong secret → `invalid_client` (401).
 */
export async function authenticateResource(
  candidates: readonly { id: string; secret: string }[],
  deps: { resources: ResourceStore; secrets: SecretHasher },
): Promise<Resource> {
  for (const candidate of candidates) {
    const resource = await deps.resources.findResource(candidate.id);
    if (resource?.secretHash != null && deps.secrets.verify(candidate.secret, resource.secretHash)) {
      return resource;
    }
  }
  throw invalidClient('unknown resource or wrong resource secret');
}

/** Who is asking at the introspection endpoint (RFC 7662 §2.1 requires authorization). */
export type IntrospectionCaller =
  | { readonly type: 'resource'; readonly resource: Resource }
  | { readonly type: 'client'; readonly client: Client };

/**
 * Authenticates an introspection caller. A resource authenticates with its id and secret, by HTTP
 * Basic or in the body (`client_id`/`client_secret`: discovery advertises `client_secret_post` here,
 * and resource servers such as mod_auth_openidc use it); resources take precedence when an id
 * names both. Anyone else must be a client authenticating by a method accepted at introspection
 * (public clients cannot: `none` is not one).
 */
export async function authenticateIntrospectionCaller(
  input: ClientAuthenticationInput,
  deps: ClientAuthenticationDeps & { resources: ResourceStore },
): Promise<IntrospectionCaller> {
  const resourceCandidates = await presentedResourceCredentials(input, deps.resources);
  if (resourceCandidates !== null) {
    return { type: 'resource', resource: await authenticateResource(resourceCandidates, deps) };
  }
  const { client } = await authenticateClient({ ...input, endpoint: 'introspection' }, deps);
  return { type: 'client', client };
}

/** The resource credentials of the request, or `null` when it does not name a resource. */
async function presentedResourceCredentials(
  input: ClientAuthenticationInput,
  resources: ResourceStore,
): Promise<{ id: string; secret: string }[] | null> {
  const { params } = input;
  const basic = parseBasicAuthorization(input.authorization);
  if (basic !== null) {
    if (params.client_secret !== undefined || params.client_assertion !== undefined) return null;
    const candidates = [
      { id: basic.clientId, secret: basic.clientSecret },
      ...(basic.raw === undefined ? [] : [{ id: basic.raw.clientId, secret: basic.raw.clientSecret }]),
    ];
    for (const candidate of candidates) {
      if ((await resources.findResource(candidate.id)) !== null) return candidates;
    }
    return null;
  }
  const { client_id: id, client_secret: secret } = params;
  if (id === undefined || secret === undefined || params.client_assertion !== undefined) return null;
  return (await resources.findResource(id)) === null ? null : [{ id, secret }];
}
