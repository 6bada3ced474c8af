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
    case 'groups':
      return user.groups ?? undefined;
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
 * The user claims each scope releases (OpenID Connect Core §5.4), as this server supports them:
 * `profile` → `name`; `email` → `email`, `email_verified`; `groups` (not an OIDC scope: the
 * common extension for directory group membership) → `groups`. The one table behind UserInfo, ID tokens
 * and the claims copied into access tokens (`consentedResourceClaims`). `sub` is never gated.
 */
export const CLAIMS_BY_SCOPE: Readonly<Record<string, readonly string[]>> = {
  profile: ['name'],
  email: ['email', 'email_verified'],
  groups: ['groups'],
};

/** Claims of the ID token itself (OIDC Core §2, §3.1.3.6; OIDC Front-Channel Logout `sid`; RFC 8176). */
const ID_TOKEN_CLAIMS: readonly string[] = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'at_hash',
  'sid',
  'amr',
  'acr',
];

/** OIDC Discovery §3 `claims_supported`: the ID token's claims and every claim a scope releases. */
export const CLAIMS_SUPPORTED: readonly string[] = [
  ...ID_TOKEN_CLAIMS,
  ...Object.values(CLAIMS_BY_SCOPE).flat(),
];

/** `profile` also covers the username claims in access tokens (OIDC Core §5.4 `preferred_username`). */
const PROFILE_USERNAME_CLAIMS: readonly string[] = ['preferred_username', 'username'];

/** The claim names the granted `scopes` cover. */
export function claimsCoveredBy(scopes: readonly string[]): string[] {
  const covered = scopes.flatMap((scope) => CLAIMS_BY_SCOPE[scope] ?? []);
  return scopes.includes('profile') ? [...covered, ...PROFILE_USERNAME_CLAIMS] : covered;
}

/** Claims released by scope (`CLAIMS_BY_SCOPE`) for UserInfo and ID tokens. `sub` is not included. */
export function scopedUserClaims(user: User, scopes: readonly string[]): Record<string, unknown> {
  return pickUserClaims(
    user,
    scopes.flatMap((scope) => CLAIMS_BY_SCOPE[scope] ?? []),
  );
}

/**
 * The resource's `claims` (copied into its access tokens) that the user consented to release: a
 * claim travels only when a granted scope covers it (`email`/`email_verified` with `email`, `name`
 * and the username claims with `profile`). A client granted `openid orders.read` thus never reads
 * the user's e-mail from an access token; a claim no scope covers is never copied.
 */
export function consentedResourceClaims(
  user: User,
  resourceClaims: readonly string[],
  grantedScopes: readonly string[],
): Record<string, unknown> {
  const covered = claimsCoveredBy(grantedScopes);
  return pickUserClaims(
    user,
    resourceClaims.filter((claim) => covered.includes(claim)),
  );
}
