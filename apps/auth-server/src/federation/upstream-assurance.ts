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
 * What the upstream sign-in adds to our session's record: its `amr` values always (they describe
 * what happened, RFC 8176), but its multi-factor claim only counts when the provider is trusted
 * for it (`trust_upstream_mfa`), so an untrusted provider's `amr: ["mfa"]` still leaves a
 * `require_mfa` client asking for our own second factor.
 */
export function upstreamMethodDetails(provider: UpstreamProvider, claims: Record<string, unknown>) {
  const upstreamAmr = amrValues(claims).filter((value) => /^[A-Za-z0-9_-]{1,32}$/.test(value));
  const claimsMfa = upstreamAmr.some((value) => SECOND_FACTOR_AMR.has(value));
  return { upstreamAmr, upstreamMfa: provider.trustUpstreamMfa && claimsMfa };
}
