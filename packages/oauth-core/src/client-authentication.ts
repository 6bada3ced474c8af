import { invalidClient, invalidRequest } from './errors.js';
import type { Client, Resource } from './model.js';
import type { SecretHasher } from './secrets.js';
import type { ClientStore, ResourceStore } from './storage/index.js';

export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
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
 * and secret are form-urlencoded before base64, so both are decoded after splitting at the first ':'.
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
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (clientId === null || clientSecret === null || clientId === '') {
    throw invalidClient('Basic credentials are not form-urlencoded');
  }
  return { clientId, clientSecret };
}

export type ClientAuthenticationMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface ClientAuthenticationInput {
  /** The `Authorization` request header, if sent. */
  authorization?: string | null | undefined;
  /** Form body parameters (`client_id`, `client_secret`, …). */
  params: Readonly<Record<string, string | undefined>>;
}

export interface ClientAuthenticationDeps {
  clients: ClientStore;
  secrets: SecretHasher;
}

export interface AuthenticatedClient {
  client: Client;
  /** `true` when the client proved its secret; `false` for a public client identified by `client_id`. */
  authenticated: boolean;
  method: ClientAuthenticationMethod;
}

/**
 * Client authentication at the token, revocation and introspection endpoints.
 * - RFC 6749 §2.3: exactly one method per request: Basic and `client_secret` in the body together
 *   → `invalid_request`; a body `client_id` that differs from the Basic one → `invalid_request`.
 * - RFC 6749 §2.3.1: `client_secret_basic` or `client_secret_post`.
 * - Public clients (no secret) send `client_id` only (method `none`); a public client presenting a
 *   secret, a confidential client presenting none, an unknown client or a wrong secret →
 *   `invalid_client` (401 with `WWW-Authenticate: Basic`, RFC 6749 §5.2).
 * Verification is a keyed HMAC (no KDF): the token endpoint is the hot path.
 */
export async function authenticateClient(
  input: ClientAuthenticationInput,
  deps: ClientAuthenticationDeps,
): Promise<AuthenticatedClient> {
  const { params } = input;
  if (params.client_assertion !== undefined || params.client_assertion_type !== undefined) {
    throw invalidClient('client assertions (private_key_jwt) are not supported');
  }
  const basic = parseBasicAuthorization(input.authorization);
  let clientId: string;
  let secret: string | null;
  let method: ClientAuthenticationMethod;
  if (basic !== null) {
    if (params.client_secret !== undefined) {
      throw invalidRequest('use exactly one client authentication method', 'Basic and client_secret');
    }
    if (params.client_id !== undefined && params.client_id !== basic.clientId) {
      throw invalidRequest('client_id does not match the authenticated client', 'Basic and client_id differ');
    }
    clientId = basic.clientId;
    secret = basic.clientSecret;
    method = 'client_secret_basic';
  } else if (params.client_secret !== undefined) {
    if (params.client_id === undefined || params.client_id === '') {
      throw invalidClient('client_secret without client_id');
    }
    clientId = params.client_id;
    secret = params.client_secret;
    method = 'client_secret_post';
  } else {
    if (params.client_id === undefined || params.client_id === '') {
      throw invalidClient('no client authentication');
    }
    clientId = params.client_id;
    secret = null;
    method = 'none';
  }

  const client = await deps.clients.findClient(clientId);
  if (client === null) throw invalidClient('unknown client');
  if (client.secretHash === null) {
    // A public client has no secret to prove; one presenting a secret is misconfigured or forged.
    if (secret !== null) throw invalidClient('public client presented a secret');
    return { client, authenticated: false, method: 'none' };
  }
  if (secret === null) throw invalidClient('confidential client presented no secret');
  if (!deps.secrets.verify(secret, client.secretHash)) throw invalidClient('wrong client secret');
  return { client, authenticated: true, method };
}

/**
 * A resource (API) authenticating at the introspection endpoint with its `id` and `secret`.
 * Unknown resource, a resource without a secret, or a wrong secret → `invalid_client` (401).
 */
export async function authenticateResource(
  credentials: { id: string; secret: string },
  deps: { resources: ResourceStore; secrets: SecretHasher },
): Promise<Resource> {
  const resource = await deps.resources.findResource(credentials.id);
  if (resource === null || resource.secretHash === null) throw invalidClient('unknown resource');
  if (!deps.secrets.verify(credentials.secret, resource.secretHash))
    throw invalidClient('wrong resource secret');
  return resource;
}

/** Who is asking at the introspection endpoint (RFC 7662 §2.1 requires authorization). */
export type IntrospectionCaller =
  | { readonly type: 'resource'; readonly resource: Resource }
  | { readonly type: 'client'; readonly client: Client };

/**
 * Authenticates an introspection caller: HTTP Basic credentials naming a resource id are checked
 * against that resource (resources take precedence when an id names both); otherwise the caller
 * must be a confidential client (`client_secret_basic` or `client_secret_post`). Public clients →
 * `invalid_client`.
 */
export async function authenticateIntrospectionCaller(
  input: ClientAuthenticationInput,
  deps: ClientAuthenticationDeps & { resources: ResourceStore },
): Promise<IntrospectionCaller> {
  const basic = parseBasicAuthorization(input.authorization);
  if (basic !== null && input.params.client_secret === undefined) {
    const resource = await deps.resources.findResource(basic.clientId);
    if (resource !== null) {
      return {
        type: 'resource',
        resource: await authenticateResource({ id: basic.clientId, secret: basic.clientSecret }, deps),
      };
    }
  }
  const { client, authenticated } = await authenticateClient(input, deps);
  if (!authenticated) throw invalidClient('public clients cannot introspect');
  return { type: 'client', client };
}
