import { invalidScope, invalidTarget } from './errors.js';
import type { Client, Resource, User } from './model.js';

/**
 * Scopes defined by OpenID Connect Core §5.4 and §11, plus `groups` (directory group names, the
 * claim of the same name); every other scope belongs to a resource.
 */
export const OIDC_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'offline_access', 'groups'];

/**
 * The OIDC scopes an access token carries (UserInfo reads them). `offline_access` only decides
 * whether a refresh token is issued, so it stays out of access tokens.
 */
export const ACCESS_TOKEN_OIDC_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'groups'];

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Splits a `scope` parameter (RFC 6749 §3.3, space-delimited, order irrelevant) into distinct
 * tokens, keeping first-seen order. Missing or blank → `[]`. A token with a forbidden character
 * throws `invalid_scope`.
 */
export function parseScope(scope: string | null | undefined): string[] {
  if (scope === undefined || scope === null) return [];
  const result: string[] = [];
  for (const token of scope.split(' ')) {
    if (token === '') continue;
    if (!SCOPE_TOKEN.test(token)) throw invalidScope('scope token has a forbidden character');
    if (!result.includes(token)) result.push(token);
  }
  return result;
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/**
 * Scopes granted = requested ∩ the client's allowed ∩ the user's allowed (when the user record
 * restricts them). Keeps the requested order. `user` is `null` for client_credentials.
 */
export function grantableScopes(
  requested: readonly string[],
  client: Pick<Client, 'scopes'>,
  user: Pick<User, 'allowedScopes'> | null,
): string[] {
  return requested.filter(
    (scope) =>
      client.scopes.includes(scope) &&
      (user === null || user.allowedScopes === null || user.allowedScopes.includes(scope)),
  );
}

const byId = (a: Resource, b: Resource): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The resources an access token may be addressed to.
 * - With RFC 8707 `resource` values: exactly those (in request order, deduplicated); an unknown one
 *   throws `invalid_target` (RFC 8707 §2).
 * - Without: every resource owning at least one of `scopes`, sorted by `id`.
 */
export function resolveAudiences(
  scopes: readonly string[],
  requestedResources: readonly string[],
  resources: readonly Resource[],
): Resource[] {
  if (requestedResources.length > 0) {
    const result: Resource[] = [];
    for (const id of requestedResources) {
      const resource = resources.find((candidate) => candidate.id === id);
      if (resource === undefined) throw invalidTarget(`unknown resource ${id.slice(0, 200)}`);
      if (!result.includes(resource)) result.push(resource);
    }
    return result;
  }
  return resources.filter((resource) => resource.scopes.some((scope) => scopes.includes(scope))).sort(byId);
}

/** Scope of an access token for `resource`: the granted OIDC scopes plus that resource's scopes. */
export function accessTokenScopes(granted: readonly string[], resource: Resource | null): string[] {
  return granted.filter(
    (scope) => ACCESS_TOKEN_OIDC_SCOPES.includes(scope) || resource?.scopes.includes(scope) === true,
  );
}

export interface AccessTokenTargetInput {
  /** Scopes granted for this token (the grant's, possibly narrowed). */
  scopes: readonly string[];
  /** RFC 8707 `resource` values of this token request. */
  requestedResources: readonly string[];
  /** Resources bound to the grant at authorization time (`Grant.resources`); may be empty. */
  boundResources: readonly string[];
  /** Every resource (`ResourceStore.listResources()`). */
  resources: readonly Resource[];
}

export interface AccessTokenTarget {
  /** `null`: the token names no resource; it is opaque with `aud` = the issuer (UserInfo only). */
  resource: Resource | null;
  scopes: string[];
}

/** Whether `resource` owns at least one of `scopes` (RFC 8707 §2: the grant reaches that API). */
export function ownsGrantedScope(resource: Resource, scopes: readonly string[]): boolean {
  return resource.scopes.some((scope) => scopes.includes(scope));
}

/**
 * Picks the one resource an access token is issued for. Rules:
 * 1. More than one `resource` in the token request → `invalid_target` (RFC 8707 §2 lets the server
 *    refuse; this server addresses each access token to a single resource).
 * 2. One `resource`: it must be known, and when the grant bound resources at authorization time it
 *    must be one of them (RFC 8707 §2.2) → else `invalid_target`. A resource not bound at
 *    authorization must own at least one granted scope: RFC 8707 §2 lets the server refuse a
 *    resource "for which the client is not authorized", and a grant holding none of an API's scopes
 *    does not authorize that API.
 * 3. None named: the candidates are the grant's bound resources, or else the resources owning a
 *    granted scope; the one whose `id` sorts first wins (deterministic). No candidate → `null`.
 * 4. Never an access token for an API with an empty scope → `invalid_target`.
 */
export function selectAccessTokenTarget(input: AccessTokenTargetInput): AccessTokenTarget {
  const { scopes, requestedResources, boundResources, resources } = input;
  if (requestedResources.length > 1) throw invalidTarget('more than one resource in a token request');
  let target: Resource | null;
  if (requestedResources.length === 1) {
    const [named] = resolveAudiences(scopes, requestedResources, resources);
    const bound = boundResources.includes(named!.id);
    if (boundResources.length > 0 && !bound) {
      throw invalidTarget('resource was not part of the authorization request');
    }
    if (!bound && !ownsGrantedScope(named!, scopes)) {
      throw invalidTarget("the grant holds none of the resource's scopes");
    }
    target = named!;
  } else if (boundResources.length > 0) {
    const bound = resources.filter((resource) => boundResources.includes(resource.id)).sort(byId);
    target = bound[0] ?? null;
  } else {
    target = resolveAudiences(scopes, [], resources)[0] ?? null;
  }
  const tokenScopes = accessTokenScopes(scopes, target);
  if (target !== null && tokenScopes.length === 0) {
    throw invalidTarget('no granted scope applies to the resource');
  }
  return { resource: target, scopes: tokenScopes };
}
