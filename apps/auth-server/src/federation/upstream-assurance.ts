import type { UpstreamProvider } from './registry.js';

/** RFC 8176 §2 values that stand for a second factor at the upstream. */
const SECOND_FACTOR_AMR = new Set([
  'mfa',
  'otp',
  'hwk',
  'swk',
  'sms',
  'fpt',
  'face',
  'iris',
  'retina',
  'vbm',
]);

const amrValues = (claims: Record<string, unknown>): string[] =>
  Array.isArray(claims.amr) ? claims.amr.filter((value): value is string => typeof value === 'string') : [];

/**
 * The upstream's `acr` (OIDC Core §2: a string, in practice a URN, URL or short level name) when it
 * is a short token-like value: at most 128 characters of letters, digits and URI punctuation, so
 * nothing unbounded or markup-like is stored in a session and copied into our tokens.
 */
export function validUpstreamAcr(value: unknown): string | null {
  return typeof value === 'string' && /^[\w.:/#?=&%~+-]{1,128}$/.test(value) ? value : null;
}

/**
 * What the upstream sign-in adds to our session's record: its `amr` values always (they describe
 * what happened, RFC 8176), but its multi-factor claim only counts when the provider is trusted
 * for it (`trust_upstream_mfa`), so an untrusted provider's `amr: ["mfa"]` still leaves a
 * `require_mfa` client asking for our own second factor.
 */
export function upstreamMethodDetails(provider: UpstreamProvider, claims: Record<string, unknown>) {
  const upstreamAmr = amrValues(claims).filter((value) => /^[A-Za-z0-9_-]{1,32}$/.test(value));
  const claimsMfa = upstreamAmr.some((value) => SECOND_FACTOR_AMR.has(value));
  // Its `acr` likewise: only a provider trusted for its assurance claims speaks for our `acr`.
  const upstreamAcr = provider.trustUpstreamMfa ? validUpstreamAcr(claims.acr) : null;
  return {
    upstreamAmr,
    upstreamMfa: provider.trustUpstreamMfa && claimsMfa,
    ...(upstreamAcr === null ? {} : { upstreamAcr }),
  };
}
