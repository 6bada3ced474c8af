import { readRegistrationRequest, registeredClient } from './dynamic-registration.js';
import { OAuthError } from './errors.js';
import type { Client } from './model.js';
import type { ClientRegistrationContext } from './registration.js';

/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a `client_id`
 * that is an HTTPS URL names a JSON document with the client's metadata, fetched by the server
 * (the app does the fetching, with its guards). Which URLs qualify and what the document must say
 * are decided here; such a client is always public and never uses `client_credentials`.
 */

export interface MetadataDocumentPolicy {
  /**
   * Origins whose URLs are accepted as client ids: `https://host[:port]`, `https://*.example.com`
   * (any subdomain), or a plain `http://` loopback origin listed exactly (a developer's machine).
   */
  allowedOrigins: readonly string[];
  /** The most a document's `scope` may hold. */
  scopes: readonly string[];
}

/** The grants a metadata-document client may hold: the code flow and its refresh tokens, never client_credentials. */
const DOCUMENT_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

const LOOPBACK_HOSTS = ['127.0.0.1', '[::1]', 'localhost'];

/**
 * The document URL `clientId` names, or undefined when it is no metadata-document client id here.
 * Draft §3: an `https` URL with a path, without fragment, credentials or dot segments; plain `http`
 * only for an exactly listed loopback origin.
 */
export function metadataDocumentUrl(clientId: string, policy: MetadataDocumentPolicy): URL | undefined {
  if (!URL.canParse(clientId)) return undefined;
  const url = new URL(clientId);
  if (url.hash !== '' || clientId.includes('#') || url.username !== '' || url.password !== '')
    return undefined;
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(clientId.slice(url.origin.length))) return undefined;
  return policy.allowedOrigins.some((allowed) => originAllowed(url, allowed)) ? url : undefined;
}

function originAllowed(url: URL, allowed: string): boolean {
  if (url.protocol === 'http:') return allowed === url.origin && LOOPBACK_HOSTS.includes(url.hostname);
  if (url.protocol !== 'https:') return false;
  const wildcard = /^https:\/\/\*\.([^/:]+)(:\d+)?$/.exec(allowed);
  if (wildcard === null) return allowed === url.origin;
  const port = wildcard[2] === undefined ? '' : wildcard[2].slice(1);
  return url.hostname.endsWith(`.${wildcard[1]}`) && url.port === port;
}

const invalidDocument = (detail: string) =>
  new OAuthError('invalid_client_metadata', {
    description: 'the client metadata document is not acceptable',
    detail,
  });

/**
 * The client a fetched document registers. Draft §4: its `client_id` MUST equal the URL it was
 * fetched from (else anyone could host a document naming someone else's client id); it holds no
 * secret (the server issued none), and authenticates with `none` here.
 */
export function clientFromMetadataDocument(
  clientId: string,
  document: unknown,
  policy: MetadataDocumentPolicy,
  lifetimes: ClientRegistrationContext['lifetimes'],
): Client {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw invalidDocument('the document is not a JSON object');
  }
  const members = document as Record<string, unknown>;
  if (members.client_id !== clientId) throw invalidDocument('the document client_id differs from its URL');
  if (members.client_secret !== undefined || members.client_secret_expires_at !== undefined) {
    throw invalidDocument('a metadata document must not carry a client secret');
  }
  const method = members.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw invalidDocument('only public clients (token_endpoint_auth_method none) are accepted');
  const metadata = readRegistrationRequest(
    { ...members, token_endpoint_auth_method: 'none' },
    { scopes: policy.scopes, grantTypes: [...DOCUMENT_GRANT_TYPES] },
  );
  const client = registeredClient(clientId, metadata, { secretHash: null, lifetimes });
  return { ...client, fromMetadataDocument: true };
}
