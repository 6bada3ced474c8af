import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * Whether the browser says this request comes from another site. Fetch Metadata first
 * (`Sec-Fetch-Site: cross-site`; `same-site`, `same-origin` and `none`, a typed URL or bookmark, are
 * not); a browser without it is judged by `Origin`, then `Referer`, against this app's public
 * origin. A request with none of them (a plain HTTP client, an old browser following a bookmark)
 * is not cross-site: RP-Initiated Logout keeps working for it.
 */
export function isCrossSiteRequest(request: FastifyRequest, publicOrigin: string): boolean {
  const fetchSite = request.headers['sec-fetch-site'];
  if (typeof fetchSite === 'string') return fetchSite.toLowerCase() === 'cross-site';
  const origin = request.headers.origin;
  // `Origin: null` is an opaque origin (a sandboxed frame, a redirect from elsewhere): not ours.
  if (typeof origin === 'string') return origin !== publicOrigin;
  const referer = request.headers.referer;
  if (typeof referer === 'string') return !URL.canParse(referer) || new URL(referer).origin !== publicOrigin;
  return false;
}

/**
 * The CSRF token of the sign-out form: an HMAC of the session id under a key derived from
 * SESSION_SECRET, so it is valid for this session only, on every instance, and nothing is stored.
 * A browser without a session gets the token of the empty id (ending nothing locally).
 */
export function signOutCsrfToken(key: Uint8Array, sessionId: string | undefined): string {
  return createHmac('sha256', key)
    .update(`sign-out:${sessionId ?? ''}`)
    .digest('base64url');
}

export function isValidSignOutCsrfToken(
  key: Uint8Array,
  sessionId: string | undefined,
  presented: unknown,
): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(signOutCsrfToken(key, sessionId));
  const actual = Buffer.from(presented);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
