/**
 * JWT and protocol claims of an ID token (RFC 7519 §4.1, OIDC Core §2): they describe the token,
 * not the user, and mean nothing once the session exists. `sid` and `auth_time` are kept.
 */
const PROTOCOL_CLAIMS = new Set([
  'iss',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'nonce',
  'at_hash',
  'c_hash',
  's_hash',
  'azp',
]);

/** The user's claims, with their names as issued (`sub` stays `sub`; no mapping to other names). */
export function userClaims(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !PROTOCOL_CLAIMS.has(name)));
}

/**
 * UserInfo (OIDC Core §5.3.2) completes the ID token: it may add claims but never changes the
 * subject, which the caller has already checked (`sub` must match, §5.3.4).
 */
export function mergeUserInfo(
  claims: Record<string, unknown>,
  userInfo: Record<string, unknown>,
): Record<string, unknown> {
  return { ...userClaims(userInfo), ...claims };
}

/** The values of the role claim (OIDC_ROLE_CLAIM), whether issued as one string or an array. */
export function rolesOf(claims: Record<string, unknown>, roleClaim: string): string[] {
  const value = claims[roleClaim];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((role): role is string => typeof role === 'string');
  return [];
}
