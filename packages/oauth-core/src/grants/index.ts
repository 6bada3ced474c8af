import { invalidRequest, unauthorizedClient, unsupportedGrantType } from '../errors.js';
import type { GrantType, TokenResponse } from '../model.js';
import { forbiddenGrantReason } from '../registration.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { deviceCodeGrant } from './device-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';
import type { AnyGrantHandler, GrantHandler, RegistryDependencies, TokenRequest } from './types.js';

export { type AuthorizationCodeGrantDependencies, authorizationCodeGrant } from './authorization-code.js';
export { type ClientCredentialsGrantDependencies, clientCredentialsGrant } from './client-credentials.js';
export { type DeviceCodeGrantDependencies, deviceCodeGrant, SLOW_DOWN_INCREMENT } from './device-code.js';
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
  storeGrantWithCode,
} from './redemption.js';
export { type RefreshTokenGrantDependencies, refreshTokenGrant } from './refresh-token.js';
export { type ReuseRevocationDependencies, revokeReusedGrant } from './reuse.js';
export { type TokenExchangeGrantDependencies, tokenExchangeGrant } from './token-exchange.js';

/**
 * `grant_type` → handler, for a server that supplies `Deps`: every handler needs `Deps` or less.
 * `GrantRegistry<never>` is any registry (for reading grant types and parameters only).
 */
export type GrantRegistry<Deps> = ReadonlyMap<string, GrantHandler<Deps>>;

/** The grants this package ships: the one list of grants (README "Architecture"). */
export const defaultGrantHandlers = [
  authorizationCodeGrant,
  refreshTokenGrant,
  clientCredentialsGrant,
  deviceCodeGrant,
  tokenExchangeGrant,
] as const satisfies readonly AnyGrantHandler[];

/**
 * What the shipped grants need together: the server's token endpoint supplies this. Derived from
 * `defaultGrantHandlers`, so a grant added there adds its dependencies here.
 */
export type TokenEndpointDependencies = RegistryDependencies<typeof defaultGrantHandlers>;

/**
 * Builds the registry; a duplicate or forbidden grant type is a programming error (throws). Its
 * type carries what its grants need together (`RegistryDependencies`), which `handleTokenRequest`
 * then requires: a grant whose dependencies the server does not supply fails to compile.
 */
export function createGrantRegistry<
  const Handlers extends readonly AnyGrantHandler[] = typeof defaultGrantHandlers,
>(
  handlers: Handlers = defaultGrantHandlers as unknown as Handlers,
): GrantRegistry<RegistryDependencies<Handlers>> {
  const registry = new Map<string, AnyGrantHandler>();
  for (const handler of handlers) {
    // RFC 9700 §2.4 and §2.1.2: registration.ts's FORBIDDEN_GRANT_TYPES.
    if (forbiddenGrantReason(handler.grantType) !== undefined) {
      throw new Error(`grant type ${handler.grantType} must never be registered`);
    }
    if (registry.has(handler.grantType)) throw new Error(`grant type ${handler.grantType} registered twice`);
    registry.set(handler.grantType, handler);
  }
  // Sound by construction: each handler needs its own part of RegistryDependencies<Handlers>.
  return registry as unknown as GrantRegistry<RegistryDependencies<Handlers>>;
}

/**
 * The `grant_type`s of a registry: discovery's `grant_types_supported` and the grants a seed may
 * give a client are read from here, so a grant added to the registry appears in both.
 */
export function registeredGrantTypes(registry: GrantRegistry<never> = createGrantRegistry()): GrantType[] {
  return [...registry.values()].map((handler) => handler.grantType);
}

/**
 * The token endpoint after client authentication: dispatch on `grant_type`.
 * Missing → `invalid_request`; not registered → `unsupported_grant_type` (RFC 6749 §5.2); the client
 * not allowed that grant → `unauthorized_client`.
 */
export async function handleTokenRequest<Deps>(
  request: TokenRequest,
  deps: NoInfer<Deps>,
  registry: GrantRegistry<Deps>,
): Promise<TokenResponse> {
  const grantType = request.params.grant_type;
  if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required');
  const handler = registry.get(grantType);
  if (handler === undefined) throw unsupportedGrantType(grantType);
  if (!(request.client.grantTypes as readonly string[]).includes(grantType)) {
    throw unauthorizedClient(`client not allowed ${grantType}`);
  }
  return handler.handle(withDeclaredParameters(request, handler), deps);
}

/**
 * Only the parameters the grant declares reach it (node-oidc-provider's
 * `stripGrantIrrelevantParams`): an extra `scope` or `resource` sent with a grant that does not
 * read it cannot change what the grant does.
 */
function withDeclaredParameters(request: TokenRequest, handler: AnyGrantHandler): TokenRequest {
  const declared = declaredParametersOf(handler);
  // Picks the declared names (a handful, fixed by the grant) rather than walking the request's:
  // no name from the request ever becomes a key of this object.
  const params: Record<string, string> = {};
  for (const name of declared) {
    const value = Object.hasOwn(request.params, name) ? request.params[name] : undefined;
    if (value !== undefined) params[name] = value;
  }
  return {
    ...request,
    params,
    resources: declared.has('resource') ? request.resources : [],
    ...(request.audiences === undefined
      ? {}
      : { audiences: declared.has('audience') ? request.audiences : [] }),
  };
}

/** Each handler's declared parameters as a set, built once per handler rather than per request. */
const declaredParameterSets = new WeakMap<AnyGrantHandler, ReadonlySet<string>>();

function declaredParametersOf(handler: AnyGrantHandler): ReadonlySet<string> {
  let declared = declaredParameterSets.get(handler);
  if (declared === undefined) {
    declared = new Set(['grant_type', ...handler.parameters]);
    declaredParameterSets.set(handler, declared);
  }
  return declared;
}

/**
 * Every parameter the token endpoint reads, `grant_type` first, then each registered grant's in
 * registry order (no repeats): what the server's API description lists for the endpoint, so a grant
 * added to the registry is described with it.
 */
export function tokenEndpointParameters(registry: GrantRegistry<never> = createGrantRegistry()): string[] {
  return [...new Set(['grant_type', ...[...registry.values()].flatMap((handler) => handler.parameters)])];
}

/** The parameters the token endpoint lets repeat: those some registered grant declares repeatable. */
export function repeatableTokenParameters(registry: GrantRegistry<never> = createGrantRegistry()): string[] {
  return [...new Set([...registry.values()].flatMap((handler) => handler.repeatableParameters ?? []))];
}
