import { decodeProtectedHeader } from 'jose';
import { type AuthorizationParams, AuthorizationRequestError } from './authorization.js';
import { invalidRequest, OAuthError } from './errors.js';
import type { Client } from './model.js';
import { PAR_REQUEST_URI_PREFIX } from './par.js';
import {
  type RequestObjectDeps,
  type RequestObjectParams,
  verifyRequestObject,
  verifyUnsignedRequestObjectByReference,
} from './request-object.js';
import type { ClientStore } from './storage/index.js';

/**
 * `request_uri` by reference (RFC 9101 §5.2, OIDC Core §6.2): a URL the client hosts that serves
 * its request object. The server fetches only URLs the client registered (OIDC Registration §2
 * `request_uris`; discovery says `require_request_uri_registration: true`), so a client cannot
 * point it at arbitrary hosts; what it fetches is processed as a `request` value, except that an
 * unsigned object is accepted from clients that may send one (OIDC Core §6.2, §15.2).
 */

/** OIDC Core §6.2 bounds the entire Request URI at 512 ASCII characters; longer ones are refused. */
const MAX_REQUEST_URI_LENGTH = 512;

const invalidRequestUri = (detail: string) =>
  new OAuthError('invalid_request_uri', { description: 'the request_uri cannot be used', detail });

/** OIDC Core §6.2: the fragment only tells versions of the content apart; the server ignores it. */
function withoutFragment(uri: string): string {
  const hash = uri.indexOf('#');
  return hash === -1 ? uri : uri.slice(0, hash);
}

/**
 * The URL to fetch for `requestUri`, or why this client may not use it: FAPI 2.0 clients only with
 * PAR (FAPI 2.0 SP §5.3.2.2: "shall only accept … pushed authorization requests"); otherwise the
 * URI must equal one the client registered, fragments aside (OIDC Registration §2 `request_uris`).
 */
export function requestUriToFetch(requestUri: string, client: Client): string {
  if (client.profile === 'fapi2')
    throw invalidRequestUri('FAPI 2.0 clients use pushed authorization requests');
  if (requestUri.length > MAX_REQUEST_URI_LENGTH) throw invalidRequestUri('longer than 512 characters');
  const wanted = withoutFragment(requestUri);
  const registered = (client.requestUris ?? []).some((uri) => withoutFragment(uri) === wanted);
  if (!registered) throw invalidRequestUri('not among the client’s registered request_uris');
  return wanted;
}

function isUnsigned(requestObject: string): boolean {
  try {
    return decodeProtectedHeader(requestObject).alg === 'none';
  } catch {
    return false; // not a JWS: `verifyRequestObject` refuses it with its reason
  }
}

/**
 * The fetched object's parameters: signed, verified as a `request` value; unsigned (`alg: none`),
 * accepted here only, by reference from a registered URL, for clients that may send one
 * (`verifyUnsignedRequestObjectByReference` says why).
 */
async function verifyFetchedRequestObject(
  requestObject: string,
  client: Client,
  deps: RequestObjectDeps,
): Promise<RequestObjectParams> {
  if (isUnsigned(requestObject)) return verifyUnsignedRequestObjectByReference(requestObject, client, deps);
  return verifyRequestObject(requestObject, client, deps);
}

export interface RequestUriDeps extends RequestObjectDeps {
  clients: ClientStore;
  /** GETs the request object at `url` for `client` (the app's guarded fetch); throws when it cannot. */
  fetchRequestObject(url: string, client: Client): Promise<string>;
}

/**
 * /authorize with a `request_uri` that is not PAR's URN: the parameters of the fetched and verified
 * request object, or `null` when there is no such `request_uri`. Nothing is redirected (the
 * redirect URI is inside the object): an unusable URI is `invalid_request_uri` (RFC 9101 §7),
 * bad content `invalid_request_object`, both on an error page.
 */
export async function resolveRequestUriByReference(
  params: AuthorizationParams,
  deps: RequestUriDeps,
): Promise<RequestObjectParams | null> {
  const requestUri = params.request_uri;
  if (typeof requestUri !== 'string' || requestUri === '' || requestUri.startsWith(PAR_REQUEST_URI_PREFIX))
    return null;
  const unredirectable = (error: OAuthError) => new AuthorizationRequestError(error, null);
  // RFC 9101 §5: the object comes "by value" or "by reference", not both.
  if (params.request !== undefined)
    throw unredirectable(invalidRequest('request and request_uri both given'));
  const clientId = params.client_id;
  if (typeof clientId !== 'string' || clientId === '') {
    throw unredirectable(invalidRequest('client_id is required with request_uri'));
  }
  const client = await deps.clients.findClient(clientId);
  if (client === null) throw unredirectable(invalidRequest('unknown client_id'));
  try {
    const url = requestUriToFetch(requestUri, client);
    let requestObject: string;
    try {
      requestObject = (await deps.fetchRequestObject(url, client)).trim();
    } catch (error) {
      throw invalidRequestUri(`could not be fetched: ${String((error as Error).message).slice(0, 200)}`);
    }
    return await verifyFetchedRequestObject(requestObject, client, deps);
  } catch (error) {
    if (error instanceof OAuthError) throw unredirectable(error);
    throw error;
  }
}
