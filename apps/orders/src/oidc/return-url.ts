/** Far above any real path of this application; longer values are refused outright. */
const MAX_RETURN_URL_LENGTH = 2048;

const SENTINEL_ORIGIN = 'http://return-url.invalid';

/**
 * Whether `value` is a path on this site, safe to redirect to after sign-in (no open redirect,
 * RFC 9700 §4.11). Refused:
 * - anything not starting with one `/`: `https:evil`, `evil.com`, `javascript:…`, `//evil` (scheme-relative);
 * - backslashes (`/\evil` is `//evil` to browsers), `@` (userinfo tricks), whitespace and control
 *   characters (browsers drop tabs and newlines, so `/\t/evil` would become `//evil`);
 * - the same tricks percent-encoded (`/%2F%2Fevil`, `/%5Cevil`, `%40`), decoded up to three times;
 * - whatever still resolves to another origin.
 */
export function isLocalReturnUrl(value: string): boolean {
  if (value.length === 0 || value.length > MAX_RETURN_URL_LENGTH) return false;
  let candidate = value;
  for (let round = 0; round < 4; round++) {
    if (!candidate.startsWith('/') || candidate.startsWith('//')) return false;
    // Raw spaces are never sent by browsers; a decoded space (`%20` in a query) is harmless.
    if (round === 0 && /\s/.test(candidate)) return false;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[\\@\u0000-\u001f\u007f]/.test(candidate)) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(candidate);
    } catch {
      return false;
    }
    if (decoded === candidate) break;
    if (round === 3) return false;
    candidate = decoded;
  }
  return new URL(value, SENTINEL_ORIGIN).origin === SENTINEL_ORIGIN;
}
