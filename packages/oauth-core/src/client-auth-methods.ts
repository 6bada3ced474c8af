import type { Client, ClientAuthenticationMethod } from './model.js';

/**
 * The one table of client authentication methods. The handlers authenticate against it
 * (`authenticateClient` refuses a method the endpoint does not list) and discovery publishes it
 * (`*_auth_methods_supported`, `*_auth_signing_alg_values_supported`), so metadata and behaviour
 * cannot drift apart.
 */

/** The endpoints that authenticate clients (or resources, at introspection). */
export type ClientAuthenticationEndpoint =
  | 'token'
  | 'pushed_authorization'
  | 'device_authorization'
  | 'revocation'
  | 'introspection';

const EVERY_ENDPOINT: readonly ClientAuthenticationEndpoint[] = [
  'token',
  'pushed_authorization',
  'device_authorization',
  'revocation',
  'introspection',
];

/** Per method: where it is accepted. */
export const CLIENT_AUTHENTICATION_METHODS: Readonly<
  Record<ClientAuthenticationMethod, readonly ClientAuthenticationEndpoint[]>
> = {
  // RFC 6749 §2.3.1.
  client_secret_basic: EVERY_ENDPOINT,
  client_secret_post: EVERY_ENDPOINT,
  // RFC 7523 §2.2, OIDC Core §9.
  private_key_jwt: EVERY_ENDPOINT,
  // A public client identifies itself by `client_id`. RFC 7662 §2.1: introspection requires
  // authentication, so `none` is not offered there.
  none: ['token', 'pushed_authorization', 'device_authorization', 'revocation'],
};

/**
 * Asymmetric algorithms accepted for client assertions and request objects. `Ed25519` is the
 * fully-specified name of EdDSA over Ed25519 (RFC 9864). Symmetric algorithms (`client_secret_jwt`)
 * are not offered: a shared secret would have to be stored reversibly.
 */
export const CLIENT_JWT_SIGNING_ALGS: readonly string[] = ['ES256', 'PS256', 'EdDSA', 'Ed25519', 'RS256'];

/** FAPI 2.0 Security Profile §5.4.1: PS256, ES256 or EdDSA only (no RS256, no `none`). */
export const FAPI2_JWT_SIGNING_ALGS: readonly string[] = ['ES256', 'PS256', 'EdDSA', 'Ed25519'];

/** Every method of the table, in table order: the `token_endpoint_auth_method` values a client may register. */
export const CLIENT_AUTHENTICATION_METHOD_NAMES = Object.keys(
  CLIENT_AUTHENTICATION_METHODS,
) as readonly ClientAuthenticationMethod[];

/** The methods accepted at `endpoint`, in table order (what discovery publishes). */
export function authMethodsSupportedAt(endpoint: ClientAuthenticationEndpoint): ClientAuthenticationMethod[] {
  return CLIENT_AUTHENTICATION_METHOD_NAMES.filter((method) =>
    CLIENT_AUTHENTICATION_METHODS[method].includes(endpoint),
  );
}

/**
 * The JWS algorithms a client may sign assertions and request objects with: the FAPI 2.0 list for
 * clients of that profile, the general allow-list otherwise.
 */
export function clientJwtSigningAlgs(client: Pick<Client, 'profile'>): readonly string[] {
  return client.profile === 'fapi2' ? FAPI2_JWT_SIGNING_ALGS : CLIENT_JWT_SIGNING_ALGS;
}

/**
 * The methods this client may use. Registered records carry them (`authMethods`); a record without
 * them (written before the member existed) keeps the old behaviour: both secret methods with a
 * secret, `none` without one.
 */
export function clientAuthMethods(
  client: Pick<Client, 'authMethods' | 'secretHash'>,
): readonly ClientAuthenticationMethod[] {
  if (client.authMethods !== undefined && client.authMethods.length > 0) return client.authMethods;
  return defaultAuthMethods(client.secretHash !== null);
}

/**
 * The methods of a client that names none (registration.ts adds `private_key_jwt` for `fapi2`):
 * with a secret, `client_secret_basic` (RFC 7591 §2's default) and `client_secret_post` too (RFC 6749
 * §2.3.1 lets a server accept both); without one, `none` (a public client).
 */
export function defaultAuthMethods(hasSecret: boolean): ClientAuthenticationMethod[] {
  return hasSecret ? ['client_secret_basic', 'client_secret_post'] : ['none'];
}

/** A public client (RFC 6749 §2.1) proves nothing about itself: PKCE and DPoP carry the binding. */
export function isPublicClient(client: Client): boolean {
  return clientAuthMethods(client).includes('none');
}
