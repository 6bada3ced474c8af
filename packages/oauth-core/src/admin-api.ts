import type { Resource } from './model.js';

/**
 * The server's own administration API as an OAuth protected resource: its identifier (the RFC 8707
 * resource indicator and the `aud` of its access tokens) is `<issuer>/admin/api`, and it owns two
 * scopes. The registration rules keep those scopes seed-only: a client gets them only when the
 * seed file's `scope` of that client lists them, never through dynamic registration (RFC 7591) or
 * a Client ID Metadata Document, and no seed resource may claim them.
 */
export const ADMIN_API_SCOPES = {
  /** Every read of the administration API. */
  read: 'admin.read',
  /** Every change made through the administration API. */
  write: 'admin.write',
} as const;

export type AdminApiScope = (typeof ADMIN_API_SCOPES)[keyof typeof ADMIN_API_SCOPES];

const ADMIN_SCOPE_LIST: readonly string[] = Object.values(ADMIN_API_SCOPES);

/** The path under the issuer where the administration API lives. */
export const ADMIN_API_PATH = '/admin/api';

/** Whether `scope` is one of the administration API's (which only the seed may give a client). */
export const isAdminApiScope = (scope: string): boolean => ADMIN_SCOPE_LIST.includes(scope);

/** The administration API's resource identifier for `issuer` (RFC 8707 §2). */
export const adminApiResourceId = (issuer: string): string => `${issuer}${ADMIN_API_PATH}`;

/**
 * The built-in resource record. Its access tokens are opaque: every request looks the token up, so
 * revoking it, or disabling its client, stops it at once on every instance (RFC 7009 §2). Short
 * lived, for automation that asks for a new one per run.
 */
export function adminApiResource(issuer: string, accessTokenTtl = 300): Resource {
  return {
    id: adminApiResourceId(issuer),
    scopes: ADMIN_SCOPE_LIST,
    accessTokenFormat: 'opaque',
    accessTokenTtl,
    accessTokenSigningAlg: 'ES256',
    secretHash: null,
    claims: [],
  };
}

/** The administration scopes in a list of scopes a registration path other than the seed asks for. */
export const adminApiScopesIn = (scopes: readonly string[]): string[] => scopes.filter(isAdminApiScope);
