import { invalidRequest, unauthorizedClient, unsupportedGrantType } from '../errors.js';
import type { GrantType, TokenResponse } from '../model.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { deviceCodeGrant } from './device-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';
import type { GrantContext, GrantHandler, TokenRequest } from './types.js';

export { authorizationCodeGrant } from './authorization-code.js';
export { clientCredentialsGrant } from './client-credentials.js';
export { deviceCodeGrant, SLOW_DOWN_INCREMENT } from './device-code.js';
export {
  issueUserTokens,
  prepareUserTokens,
  type UserTokenIssuance,
  type UserTokenWriters,
} from './issue-tokens.js';
export {
  commitCodeRedemption,
  commitRefreshTokenRotation,
  findAuthorizationCodeWithGrantAndUser,
  findRefreshTokenWithGrantAndUser,
} from './redemption.js';
export { refreshTokenGrant } from './refresh-token.js';
export { tokenExchangeGrant } from './token-exchange.js';

/** `grant_type` → handler. */
export type GrantRegistry = ReadonlyMap<string, GrantHandler>;

// RFC 9700 §2.4: the resource owner password credentials grant MUST NOT be used; implicit is not a
// token endpoint grant at all (RFC 9700 §2.1.2).
const FORBIDDEN_GRANT_TYPES: readonly string[] = ['password', 'implicit'];

/** The grants this package ships: the one list of grants (README "Architecture"). */
export const defaultGrantHandlers: readonly GrantHandler[] = [
  authorizationCodeGrant,
  refreshTokenGrant,
  clientCredentialsGrant,
  deviceCodeGrant,
  tokenExchangeGrant,
];

/** Builds the registry; a duplicate or forbidden grant type is a programming error (throws). */
export function createGrantRegistry(handlers: readonly GrantHandler[] = defaultGrantHandlers): GrantRegistry {
  const registry = new Map<string, GrantHandler>();
  for (const handler of handlers) {
    if (FORBIDDEN_GRANT_TYPES.includes(handler.grantType)) {
      throw new Error(`grant type ${handler.grantType} must never be registered`);
    }
    if (registry.has(handler.grantType)) throw new Error(`grant type ${handler.grantType} registered twice`);
    registry.set(handler.grantType, handler);
  }
  return registry;
}

/**
 * The `grant_type`s of a registry: discovery's `grant_types_supported` and the grants a seed may
 * give a client are read from here, so a grant added to the registry appears in both.
 */
export function registeredGrantTypes(registry: GrantRegistry = createGrantRegistry()): GrantType[] {
  return [...registry.values()].map((handler) => handler.grantType);
}

/**
 * The token endpoint after client authentication: dispatch on `grant_type`.
 * Missing → `invalid_request`; not registered → `unsupported_grant_type` (RFC 6749 §5.2); the client
 * not allowed that grant → `unauthorized_client`.
 */
export async function handleTokenRequest(
  request: TokenRequest,
  context: GrantContext,
  registry: GrantRegistry,
): Promise<TokenResponse> {
  const grantType = request.params.grant_type;
  if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required');
  const handler = registry.get(grantType);
  if (handler === undefined) throw unsupportedGrantType(grantType);
  if (!(request.client.grantTypes as readonly string[]).includes(grantType)) {
    throw unauthorizedClient(`client not allowed ${grantType}`);
  }
  return handler.handle(withDeclaredParameters(request, handler), context);
}

/**
 * Only the parameters the grant declares reach it (node-oidc-provider's
 * `stripGrantIrrelevantParams`): an extra `scope` or `resource` sent with a grant that does not
 * read it cannot change what the grant does.
 */
function withDeclaredParameters(request: TokenRequest, handler: GrantHandler): TokenRequest {
  const declared = new Set(['grant_type', ...handler.parameters]);
  const params = Object.fromEntries(Object.entries(request.params).filter(([name]) => declared.has(name)));
  return {
    ...request,
    params,
    resources: declared.has('resource') ? request.resources : [],
    ...(request.audiences === undefined
      ? {}
      : { audiences: declared.has('audience') ? request.audiences : [] }),
  };
}

/** The parameters the token endpoint lets repeat: those some registered grant declares repeatable. */
export function repeatableTokenParameters(registry: GrantRegistry = createGrantRegistry()): string[] {
  return [...new Set([...registry.values()].flatMap((handler) => handler.repeatableParameters ?? []))];
}
