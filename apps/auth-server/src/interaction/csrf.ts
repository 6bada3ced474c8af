import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens for the login, consent and logout-confirmation forms, bound to both the interaction and the browser:
 * the token is an HMAC keyed by the browser-binding cookie over the form's purpose and the
 * interaction id. Nothing extra is stored; a forged cross-site post cannot know the cookie, a
 * token copied from another browser's page does not match this browser's cookie, and a token of
 * one interaction or form does not work on another.
 */
export type CsrfPurpose = 'login' | 'consent' | 'device' | 'logout';

export function csrfTokenFor(browserKey: string, purpose: CsrfPurpose, interactionId: string): string {
  return createHmac('sha256', browserKey).update(`${purpose}:${interactionId}`).digest('base64url');
}

export function isValidCsrfToken(
  submitted: unknown,
  browserKey: string,
  purpose: CsrfPurpose,
  interactionId: string,
): boolean {
  if (typeof submitted !== 'string' || submitted.length === 0) return false;
  // Compare digests of equal length so the comparison is constant-time whatever was submitted.
  const expected = createHash('sha256')
    .update(csrfTokenFor(browserKey, purpose, interactionId))
    .digest();
  const actual = createHash('sha256').update(submitted).digest();
  return timingSafeEqual(expected, actual);
}
