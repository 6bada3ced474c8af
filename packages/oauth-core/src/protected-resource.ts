/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): where a resource server publishes which
 * authorization servers issue its tokens and what it accepts, so a client that only knows the
 * resource's URL (an MCP client, say) can discover everything from one 401.
 */

/** The well-known suffix of RFC 9728 §3 (registered in §8.2). */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * RFC 9728 §3.1: the metadata URL of `resource`, the well-known path inserted between the host and
 * the resource's path (a terminating slash after the host removed). `undefined` when `resource`
 * is not an absolute `http(s)` URL without query or fragment (§1.2: the identifier is such a URL),
 * which means this resource publishes no metadata.
 */
export function protectedResourceMetadataUrl(resource: string): string | undefined {
  const path = protectedResourceMetadataPath(resource);
  return path === undefined ? undefined : `${new URL(resource).origin}${path}`;
}

/** The path part of `protectedResourceMetadataUrl`, for the route that serves it. */
export function protectedResourceMetadataPath(resource: string): string | undefined {
  if (!URL.canParse(resource)) return undefined;
  const url = new URL(resource);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '') {
    return undefined;
  }
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

export interface ProtectedResourceDescription {
  /** The resource identifier: RFC 9728 §3.3 requires it to equal the URL the metadata was derived from. */
  resource: string;
  /** Issuer identifiers whose tokens the resource accepts (RFC 8414). */
  authorizationServers: readonly string[];
  scopes: readonly string[];
  /** RFC 9449 §5.1 / RFC 9728 §2: the JWS algorithms accepted on DPoP proofs. */
  dpopSigningAlgs: readonly string[];
}

/**
 * RFC 9728 §2: the metadata document. Tokens travel in the `Authorization` header only (RFC 6750
 * §2.1): this resource reads no token from a form body or a query string.
 */
export function protectedResourceMetadata(description: ProtectedResourceDescription) {
  return {
    resource: description.resource,
    authorization_servers: [...description.authorizationServers],
    scopes_supported: [...description.scopes],
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: [...description.dpopSigningAlgs],
  };
}
