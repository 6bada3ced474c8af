import type { ResponseMode, ResponseSigningClient } from '@oidc-orders/oauth-core';

/**
 * Building the authorization response (RFC 6749 §4.1.2, §4.1.2.1) for the client's redirect URI.
 * Pure: the routes decide how to send it (redirect or form_post page) and whether to sign it
 * (the response mode's row in oauth-core's `RESPONSE_MODES`).
 */
export interface AuthorizationResponseTarget {
  /** Already validated against the client's registered URIs (exact match). */
  redirectUri: string;
  responseMode: ResponseMode;
  /** Echoed unchanged (RFC 6749 §4.1.2 "REQUIRED if the state parameter was present"). */
  state: string | null;
  /** RFC 9207 §2: `iss` in every authorization response, success or error. */
  issuer: string;
  /** The client the response is for: the `aud` and algorithm of a signed (JARM) response. */
  client: ResponseSigningClient;
}

export function authorizationResponseParams(
  target: AuthorizationResponseTarget,
  result: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(result)) if (value !== undefined) params[name] = value;
  if (target.state !== null) params.state = target.state;
  params.iss = target.issuer;
  return params;
}

/**
 * The redirect URL of the `query` delivery. RFC 6749 §3.1.2: the redirect URI "MAY include an
 * application/x-www-form-urlencoded formatted query component, which MUST be retained when adding
 * additional query parameters".
 */
export function authorizationRedirectUrl(
  target: Pick<AuthorizationResponseTarget, 'redirectUri'>,
  params: Readonly<Record<string, string>>,
): string {
  const url = new URL(target.redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.append(name, value);
  return url.toString();
}

/**
 * A CSP `form-action` source allowing navigation to the redirect URI: its origin for http(s), or
 * its scheme for a native app's private-use URI scheme (RFC 8252 §7.1).
 */
export function formActionSourceFor(redirectUri: string): string | null {
  if (!URL.canParse(redirectUri)) return null;
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : null;
}
