/**
 * Plain-language explanations of scopes for the consent page. The OpenID Connect scopes have fixed
 * meanings (OIDC Core §5.4, §11); API scopes are described from their conventional `.read` /
 * `.write` suffix, and anything else is named as it is rather than guessed at.
 */
const oidcScopeDescriptions: Record<string, string> = {
  openid: 'Confirm who you are when you sign in',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Keep access when you are not using the application',
};

export function describeScope(scope: string): string {
  const known = oidcScopeDescriptions[scope];
  if (known !== undefined) return known;
  const readMatch = /^(.+)\.read$/.exec(scope);
  if (readMatch) return `View your ${readMatch[1]}`;
  const writeMatch = /^(.+)\.write$/.exec(scope);
  if (writeMatch) return `Create and change your ${writeMatch[1]}`;
  return `Use the permission “${scope}”`;
}
