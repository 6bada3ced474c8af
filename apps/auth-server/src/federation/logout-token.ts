import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

/** OIDC Back-Channel Logout 1.0 §2.4: the event a logout token carries. */
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** How far a logout token's `iat` may lie in the past or future, seconds. */
const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300;

export interface VerifiedLogoutToken {
  jti: string;
  sid?: string;
  sub?: string;
  exp: number;
}

export class LogoutTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogoutTokenError';
  }
}

/** One remote key set per jwks_uri: jose fetches it again when a token names an unknown `kid`. */
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function keySetOf(jwksUri: string) {
  let keySet = keySets.get(jwksUri);
  if (keySet === undefined) {
    keySet = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: 5000 });
    keySets.set(jwksUri, keySet);
  }
  return keySet;
}

/**
 * OIDC Back-Channel Logout 1.0 §2.6, steps 2–7: the signature with the provider's keys (`none`
 * refused), `iss` the provider, `aud` our client id, `iat` recent, an `events` member with the
 * back-channel logout event, `sub` or `sid`, and no `nonce` (so an ID token cannot pass as one).
 * The caller checks the `jti` for replay (§2.6 step 8's recommended check).
 */
export async function verifyLogoutToken(
  token: string,
  expected: { issuer: string; clientId: string; jwksUri: string; nowSeconds: number },
): Promise<VerifiedLogoutToken> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keySetOf(expected.jwksUri), {
      issuer: expected.issuer,
      audience: expected.clientId,
      currentDate: new Date(expected.nowSeconds * 1000),
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
      typ: undefined,
    }));
  } catch (error) {
    throw new LogoutTokenError(`logout token rejected: ${(error as Error).message}`);
  }
  const events = payload.events as Record<string, unknown> | undefined;
  const event = events?.[BACKCHANNEL_LOGOUT_EVENT];
  if (event === null || typeof event !== 'object')
    throw new LogoutTokenError('logout token without the logout event');
  if ('nonce' in payload) throw new LogoutTokenError('logout token with a nonce');
  const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
  const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
  if (sid === undefined && sub === undefined)
    throw new LogoutTokenError('logout token names neither sid nor sub');
  if (typeof payload.jti !== 'string') throw new LogoutTokenError('logout token without jti');
  const exp =
    typeof payload.exp === 'number' ? payload.exp : expected.nowSeconds + LOGOUT_TOKEN_MAX_AGE_SECONDS;
  return { jti: payload.jti, exp, ...(sid ? { sid } : {}), ...(sub ? { sub } : {}) };
}
