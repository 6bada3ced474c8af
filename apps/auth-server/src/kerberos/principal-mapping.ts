import type { User, UserStore } from '@oidc-orders/oauth-core';

/**
 * Which user a ticket's client principal signs in (README "Kerberos", "Mapping principals"):
 *   1. the user whose seed member `kerberos_principal` is exactly the principal (realm included);
 *   2. only when KERBEROS_USERNAME_REALM is set (off by default): `name@<that realm>` → the user
 *      whose `username` is `name`. Principals with an instance (`name/admin@REALM`, service
 *      principals) never match the rule: they are not people's everyday accounts.
 * Anything else is "not registered here".
 */
export interface PrincipalMappingDeps {
  users: Pick<UserStore, 'findUserBySub' | 'findUserByUsername'>;
  findSubByPrincipal(principal: string): Promise<string | null>;
  usernameRealm: string | null;
}

export async function userForPrincipal(principal: string, deps: PrincipalMappingDeps): Promise<User | null> {
  const sub = await deps.findSubByPrincipal(principal);
  if (sub !== null) return deps.users.findUserBySub(sub);
  const username = usernameByRealmRule(principal, deps.usernameRealm);
  return username === null ? null : deps.users.findUserByUsername(username);
}

/** `name@REALM` → `name` when REALM is the configured one and `name` has no instance part. */
export function usernameByRealmRule(principal: string, usernameRealm: string | null): string | null {
  if (usernameRealm === null) return null;
  const at = principal.lastIndexOf('@');
  if (at <= 0 || principal.slice(at + 1) !== usernameRealm) return null;
  const name = principal.slice(0, at);
  return name.includes('/') ? null : name;
}
