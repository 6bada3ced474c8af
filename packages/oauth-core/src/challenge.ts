/**
 * The one builder of `WWW-Authenticate` challenges (RFC 9110 §11.6.1): the authorization server's
 * Bearer (RFC 6750 §3) and DPoP (RFC 9449 §7.1) challenges, the token endpoint's Basic one
 * (RFC 6749 §5.2), and the orders resource server's, all written the same way.
 */

/** `scheme`, then `name="value"` pairs in order; a pair whose value is undefined is left out. */
export type ChallengeParameters = ReadonlyArray<readonly [name: string, value: string | undefined]>;

/**
 * RFC 9110 §5.6.4 quoted-string: `"` and `\` are escaped with a backslash; characters a header
 * value cannot carry (controls other than tab, RFC 9110 §5.5) are removed, so an error description
 * never splits or ends the header.
 */
export function quotedString(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
  const safe = value.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '');
  return `"${safe.replace(/["\\]/g, (character) => `\\${character}`)}"`;
}

/** `Bearer realm="api", error="invalid_token"`: one challenge, parameters quoted. */
export function authenticationChallenge(scheme: string, parameters: ChallengeParameters = []): string {
  const rendered = parameters
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined)
    .map(([name, value]) => `${name}=${quotedString(value)}`);
  return rendered.length === 0 ? scheme : `${scheme} ${rendered.join(', ')}`;
}
