import * as oidc from 'openid-client';

/**
 * What went wrong when finishing an upstream sign-in, in the few kinds the pages distinguish:
 *   `timeout`     the provider did not answer in time (504 page);
 *   `unavailable` the provider could not be reached or answered with a server error (502 page);
 *   `refused`     the response or the ID token failed a check: signature, `iss`, `aud`, `exp`,
 *                 `nonce`, `azp`, the RFC 9207 `iss` parameter, or the token endpoint refused the
 *                 code (400 page: it is a sign-in we will not accept, not our fault or theirs).
 */
export type UpstreamFailure = 'timeout' | 'unavailable' | 'refused';

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 5) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

export function classifyUpstreamFailure(error: unknown): UpstreamFailure {
  const chain = causes(error);
  if (
    chain.some(
      (item) => item instanceof Error && (item.name === 'TimeoutError' || item.name === 'AbortError'),
    )
  )
    return 'timeout';
  // A ResponseBodyError is an OAuth error the token endpoint answered (RFC 6749 §5.2): refused.
  if (chain.some((item) => item instanceof oidc.ResponseBodyError)) return 'refused';
  if (chain.some((item) => item instanceof TypeError && /fetch failed/.test(item.message)))
    return 'unavailable';
  const code = (error as { code?: unknown }).code;
  if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON') return 'unavailable';
  return 'refused';
}

export const FAILURE_PAGES = {
  timeout: {
    status: 504,
    title: 'The sign-in service did not answer',
    message: 'The other sign-in service took too long to answer. Try again, or sign in another way.',
    code: 'upstream_timeout',
  },
  unavailable: {
    status: 502,
    title: 'The sign-in service is unavailable',
    message: 'The other sign-in service could not be reached. Try again later, or sign in another way.',
    code: 'upstream_unavailable',
  },
  refused: {
    status: 400,
    title: 'The sign-in could not be verified',
    message: 'The answer from the other sign-in service did not pass our checks. Please start again.',
    code: 'upstream_response_invalid',
  },
} as const;
