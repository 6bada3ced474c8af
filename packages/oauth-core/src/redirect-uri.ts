import { isPublicClient } from './client-auth-methods.js';
import type { Client } from './model.js';

/**
 * Whether `requested` (an authorization request's `redirect_uri`) is one of the client's
 * registered redirect URIs.
 *
 * RFC 9700 §4.1.3: exact string comparison, no pattern, prefix, case or trailing-slash tolerance.
 * One exception, RFC 8252 §7.3 (also RFC 9700 §4.1.1): a native app receiving the response on a
 * loopback interface listens on whatever port is free, so for a loopback IP literal the server
 * "MUST allow any port to be specified at the time of the request"; everything else (scheme,
 * host, path, query) still matches exactly. Only for public clients (the native apps §7.3 is
 * about) and only for `http://127.0.0.1` and `http://[::1]`: `localhost` gets no allowance, since
 * a name may resolve elsewhere (RFC 8252 §8.3 "NOT RECOMMENDED").
 */
export function isRegisteredRedirectUri(client: Client, requested: string): boolean {
  if (client.redirectUris.includes(requested)) return true;
  // draft-ietf-oauth-client-id-metadata-document: the document's redirect URIs, exactly.
  if (!isPublicClient(client) || client.fromMetadataDocument === true) return false;
  const requestedWithoutPort = loopbackWithoutPort(requested);
  if (requestedWithoutPort === null) return false;
  return client.redirectUris.some((registered) => loopbackWithoutPort(registered) === requestedWithoutPort);
}

/**
 * `http://127.0.0.1` or `http://[::1]`, an optional port, then the path, query or nothing: the
 * authority must end right there (no userinfo, no other host sharing the prefix).
 */
const LOOPBACK_IP_URI = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?(?=[/?]|$)/;
const MAX_PORT = 65535;

/** The URI with its port removed when it is a loopback IP literal URI with a valid port; else `null`. */
function loopbackWithoutPort(uri: string): string | null {
  const match = LOOPBACK_IP_URI.exec(uri);
  if (match === null) return null;
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > MAX_PORT)) return null;
  return `http://${match[1]}${uri.slice(match[0].length)}`;
}
