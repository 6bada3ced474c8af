import { jwtVerify } from 'jose';
import { ACCEPTED_ALGORITHMS } from './jwks.js';
import type { DiscoveredProvider } from './provider.js';

/** OIDC Back-Channel Logout 1.0 §2.4: the event that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** How old (by `iat`) a logout token may be; it is delivered right after the logout happens. */
const MAX_LOGOUT_TOKEN_AGE_SECONDS = 300;
/** Clock difference tolerated between the provider and this service. */
const CLOCK_TOLERANCE_SECONDS = 30;

export class InvalidLogoutTokenError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'InvalidLogoutTokenError';
  }
}

export interface LogoutTarget {
  sid: string | undefined;
  sub: string | undefined;
}

/**
 * Validates a logout token as OIDC Back-Channel Logout 1.0 §2.6 requires: signature with the
 * provider's keys, `iss`, `aud` containing our client id, `iat` (and `exp` when present), an
 * `events` member holding the back-channel-logout event with an object value, `sid` or `sub`, and
 * no `nonce` (so an ID token can never be replayed as a logout token, §2.4).
 */
export async function verifyLogoutToken(
  token: string,
  { provider, clientId }: { provider: DiscoveredProvider; clientId: string },
): Promise<LogoutTarget> {
  let payload: Record<string, unknown>;
  let typ: string | undefined;
  try {
    const verified = await jwtVerify(token, provider.jwks, {
      issuer: provider.issuer,
      audience: clientId,
      algorithms: [...ACCEPTED_ALGORITHMS],
      requiredClaims: ['iat'],
      maxTokenAge: MAX_LOGOUT_TOKEN_AGE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
    payload = verified.payload;
    typ = verified.protectedHeader.typ;
  } catch (error) {
    throw new InvalidLogoutTokenError('the logout token is not valid', { cause: error });
  }
  // §2.4 recommends explicit typing (`logout+jwt`); tokens of other explicit types are refused.
  if (typ !== undefined && !['logout+jwt', 'application/logout+jwt', 'JWT'].includes(typ)) {
    throw new InvalidLogoutTokenError('the token is not typed as a logout token');
  }
  const events = payload.events;
  const event =
    events !== null && typeof events === 'object' && !Array.isArray(events)
      ? (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT]
      : undefined;
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new InvalidLogoutTokenError('the token has no back-channel logout event');
  }
  if ('nonce' in payload) throw new InvalidLogoutTokenError('a logout token must not carry a nonce');
  const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
  const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
  if (sid === undefined && sub === undefined)
    throw new InvalidLogoutTokenError('the token names no sid or sub');
  return { sid, sub };
}
