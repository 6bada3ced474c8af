import type { User } from './model.js';

/**
 * Reads one user claim by its OIDC name (OpenID Connect Core §5.1). `undefined` when the claim is
 * unknown or the user has no value: absent claims are omitted, never sent as null.
 */
export function userClaim(user: User, claim: string): unknown {
  switch (claim) {
    case 'sub':
      return user.sub;
    case 'name':
      return user.name ?? undefined;
    case 'email':
      return user.email ?? undefined;
    case 'email_verified':
      return user.email === null ? undefined : user.emailVerified;
    case 'preferred_username':
    case 'username':
      return user.username;
    default:
      return undefined;
  }
}

/** The named claims the user has values for (for `Resource.claims`). */
export function pickUserClaims(user: User, claims: readonly string[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const claim of claims) {
    const value = userClaim(user, claim);
    if (value !== undefined) result[claim] = value;
  }
  return result;
}

/**
 * Claims released by scope (OpenID Connect Core §5.4), as this server supports them:
 * `profile` → `name`; `email` → `email`, `email_verified`. `sub` is not included.
 */
export function scopedUserClaims(user: User, scopes: readonly string[]): Record<string, unknown> {
  const names: string[] = [];
  if (scopes.includes('profile')) names.push('name');
  if (scopes.includes('email')) names.push('email', 'email_verified');
  return pickUserClaims(user, names);
}
