/**
 * A readable name for the device a session signed in from ("Chrome on Linux", "Safari on iPhone",
 * "curl"), derived from the User-Agent header, for the account page's list of sessions. It only has
 * to help a person recognise their own sessions, so a short table of the common browsers, systems
 * and tools is enough (no UA database): a header it does not know gives "Unknown browser". The
 * header is client-controlled; what comes back is either a fixed name from these tables or a
 * product token restricted to a few safe characters, and the page escapes it all the same.
 */

/** Longest User-Agent stored with a session; longer headers are cut (they are free text). */
export const USER_AGENT_MAX_LENGTH = 512;

type Rule = readonly [pattern: RegExp, name: string];

// Order matters: Edge, Opera, Samsung Internet and Vivaldi also say "Chrome/"; Chrome also says "Safari/".
const BROWSERS: readonly Rule[] = [
  [/\b(?:Edg|EdgA|EdgiOS|Edge)\//, 'Edge'],
  [/\b(?:OPR|OPiOS|Opera)\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:Chrome|CriOS|Chromium|HeadlessChrome)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\b(?:MSIE |Trident\/)/, 'Internet Explorer'],
];

// Android and ChromeOS before Linux (their UAs say "Linux" too); iPhone and iPad before macOS.
const SYSTEMS: readonly Rule[] = [
  [/\bWindows\b/, 'Windows'],
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\b(?:Macintosh|Mac OS X)\b/, 'macOS'],
  [/\b(?:Linux|X11)\b/, 'Linux'],
];

// Programs that are not browsers, named by their product token.
const TOOLS: readonly Rule[] = [
  [/^curl\//i, 'curl'],
  [/^Wget\//i, 'Wget'],
  [/^HTTPie\//i, 'HTTPie'],
  [/^PostmanRuntime\//i, 'Postman'],
  [/^python-requests\//i, 'Python requests'],
  [/^Python-urllib\//i, 'Python urllib'],
  [/^Go-http-client\//i, 'Go HTTP client'],
  [/^okhttp\//i, 'OkHttp'],
  [/^(?:node-fetch|undici|node)\b/i, 'Node.js'],
];

const firstMatch = (rules: readonly Rule[], userAgent: string): string | null =>
  rules.find(([pattern]) => pattern.test(userAgent))?.[1] ?? null;

/** The leading product token of a header that names some other program ("MyApp/1.2 …" → "MyApp"). */
const productToken = (userAgent: string): string | null => {
  const token = /^([A-Za-z][A-Za-z0-9._-]{0,31})\//.exec(userAgent)?.[1];
  return token === undefined || token === 'Mozilla' ? null : token;
};

/** "Chrome on Linux", "Firefox on Windows", "curl", "Unknown browser on Android", "Unknown device". */
export function describeUserAgent(userAgent: string | null | undefined): string {
  const header = (userAgent ?? '').trim();
  if (header === '') return 'Unknown device';
  const tool = firstMatch(TOOLS, header);
  if (tool !== null) return tool;
  const browser = firstMatch(BROWSERS, header);
  const system = firstMatch(SYSTEMS, header);
  if (browser === null && system === null) return productToken(header) ?? 'Unknown browser';
  return `${browser ?? 'Unknown browser'}${system === null ? '' : ` on ${system}`}`;
}
