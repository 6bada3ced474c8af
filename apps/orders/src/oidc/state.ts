import { EncryptJWT, jwtDecrypt } from 'jose';

/** What a sign-in needs back at the callback; it travels inside `state`, encrypted (so also integrity-protected). */
export interface SignInState {
  /** Local path to return to after sign-in (already validated). */
  returnUrl: string;
  /** RFC 7636 code verifier; only this server can read it back. */
  codeVerifier: string;
  /** OIDC Core §3.1.2.1 nonce, compared with the ID token's. */
  nonce: string;
  /** Names this attempt's correlation cookie. */
  correlationId: string;
  /** SHA-256 of the correlation cookie's value: the state is only good in the browser that holds it. */
  correlationHash: string;
  /** The redirect URI sent in the authorization request; the token request must repeat it (RFC 6749 §4.1.3). */
  redirectUri: string;
}

/** How long a sign-in may take from redirect to callback. */
export const SIGN_IN_STATE_TTL_SECONDS = 15 * 60;

/**
 * `state` as a JWE (dir + A256GCM) under a key derived from SESSION_SECRET. Nothing is stored on
 * the server between the redirect and the callback, so any instance sharing the secret can finish
 * a sign-in, and the PKCE verifier never reaches the browser in readable form.
 */
export async function protectState(state: SignInState, key: Uint8Array): Promise<string> {
  return new EncryptJWT({
    ru: state.returnUrl,
    cv: state.codeVerifier,
    n: state.nonce,
    cid: state.correlationId,
    ch: state.correlationHash,
    rd: state.redirectUri,
  })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .setIssuedAt()
    .setExpirationTime(`${SIGN_IN_STATE_TTL_SECONDS}s`)
    .encrypt(key);
}

export class StateUnprotectError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('unable to unprotect state', options);
    this.name = 'StateUnprotectError';
  }
}

/** Decrypts and checks `state`; anything else (other key, tampered, expired, malformed) is StateUnprotectError. */
export async function unprotectState(value: string, key: Uint8Array): Promise<SignInState> {
  try {
    const { payload } = await jwtDecrypt(value, key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
      requiredClaims: ['exp', 'iat'],
    });
    const { ru, cv, n, cid, ch, rd } = payload;
    if (![ru, cv, n, cid, ch, rd].every((member) => typeof member === 'string')) {
      throw new Error('state is missing members');
    }
    return {
      returnUrl: ru as string,
      codeVerifier: cv as string,
      nonce: n as string,
      correlationId: cid as string,
      correlationHash: ch as string,
      redirectUri: rd as string,
    };
  } catch (error) {
    throw new StateUnprotectError({ cause: error });
  }
}
