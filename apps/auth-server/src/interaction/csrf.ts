import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens for the login, consent, device and logout-confirmation forms, bound to both the
 * browser and what the form acts on: the token is an HMAC keyed by the browser-binding cookie over
 * the form's purpose and `boundTo` (the interaction id; the SSO session id for logout). Nothing
 * extra is stored; a forged cross-site post cannot know the cookie, a token copied from another
 * browser's page does not match this browser's cookie, and a token of one interaction, session or
 * form does not work on another.
 */
export type CsrfPurpose =
  | 'login'
  | 'consent'
  | 'device'
  | 'logout'
  | 'otp'
  | 'enrol'
  | 'account'
  | 'passkey'
  | 'recovery'
  | 'directory-password'
  | 'admin-console';

export function csrfTokenFor(browserKey: string, purpose: CsrfPurpose, boundTo: string): string {
  return createHmac('sha256', browserKey).update(`${purpose}:${boundTo}`).digest('base64url');
}

export function isValidCsrfToken(
  submitted: unknown,
  browserKey: string,
  purpose: CsrfPurpose,
  boundTo: string,
): boolean {
  if (typeof submitted !== 'string' || submitted.length === 0) return false;
  // Compare digests of equal length so the comparison is constant-time whatever was submitted.
  const expected = createHash('sha256')
    .update(csrfTokenFor(browserKey, purpose, boundTo))
    .digest();
  const actual = createHash('sha256').update(submitted).digest();
  return timingSafeEqual(expected, actual);
}
