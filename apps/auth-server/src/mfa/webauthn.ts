import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { NewPasskey, StoredPasskey } from './passkey-repository.js';
import { CHALLENGE_TTL_SECONDS } from './webauthn-challenges.js';

/**
 * The WebAuthn Level 3 ceremonies (§7.1 registration, §7.2 authentication) through
 * @simplewebauthn/server: this module decides the options and reads the verified results; the
 * library does the CBOR, COSE and signature work. Nothing here touches HTTP or the database.
 */

/**
 * The library (with its ASN.1 and X.509 dependencies, a good part of the server's code) is loaded
 * at the first ceremony, not at start: most starts never see a passkey before they are ready.
 */
let webAuthnLibrary: Promise<typeof import('@simplewebauthn/server')> | undefined;
const loadWebAuthnLibrary = () => {
  webAuthnLibrary ??= import('@simplewebauthn/server');
  return webAuthnLibrary;
};

/** The Relying Party (WebAuthn §5.1.2 RP ID; §7.1 step 9 / §7.2 step 13 expected origin). */
export interface RelyingParty {
  /** The issuer's host name: WebAuthn §4 "RP ID" is a domain, so without the port. */
  id: string;
  /** The issuer's origin, the only one the pages are served from. */
  origin: string;
  /** Shown by the authenticator at registration. */
  name: string;
}

/** The RP ID and origin follow from ISSUER, as every other public URL does (CONTRACT "ISSUER"). */
export function relyingPartyOf(issuer: string): RelyingParty {
  const url = new URL(issuer);
  return { id: url.hostname, origin: url.origin, name: url.host };
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const bytesOf = (value: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(value, 'base64url'));
const descriptorOf = (passkey: StoredPasskey) => ({ id: passkey.id, transports: passkey.transports });

/** WebAuthn §15.1 recommends 300 000 to 600 000 ms when user verification is asked for. */
const CEREMONY_TIMEOUT_MS = CHALLENGE_TTL_SECONDS * 1000;

export interface PasskeyOwner {
  sub: string;
  username: string;
  name: string | null;
}

/**
 * §5.4 creation options: a discoverable credential (`residentKey: 'required'`, §5.4.6), so the
 * login page can sign in without a username; user verification preferred, not required, so a
 * security key without a PIN still works (it then counts as one factor, oauth-core
 * `AUTHENTICATION_METHODS.passkey`); the user's existing credentials excluded (§5.4
 * `excludeCredentials`) so one authenticator is not registered twice; no attestation (§5.4.7).
 */
export async function registrationOptions(
  rp: RelyingParty,
  owner: PasskeyOwner,
  /** The user's handle (passkey repository `userHandleOf`), base64url. */
  userHandle: string,
  existing: readonly StoredPasskey[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { generateRegistrationOptions } = await loadWebAuthnLibrary();
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: owner.username,
    userDisplayName: owner.name ?? owner.username,
    userID: bytesOf(userHandle),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map(descriptorOf),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
}

/**
 * §5.5 request options. With `allowed` empty the browser offers the discoverable credentials of
 * this RP (§5.5 `allowCredentials`: "the empty list … the client will use any discoverable
 * credential"): the sign-in without a username. Otherwise only the user's own credentials.
 */
export async function authenticationOptions(
  rp: RelyingParty,
  allowed: readonly StoredPasskey[],
  challenge?: Uint8Array<ArrayBuffer>,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await loadWebAuthnLibrary();
  return generateAuthenticationOptions({
    rpID: rp.id,
    ...(challenge ? { challenge } : {}),
    allowCredentials: allowed.map(descriptorOf),
    userVerification: 'preferred',
    timeout: CEREMONY_TIMEOUT_MS,
  });
}

/**
 * The challenge the browser signed (§5.8.1 `CollectedClientData.challenge`, base64url), read before
 * any check so the server can tell which ceremony the answer claims to finish; `null` when the
 * client data is not JSON with a string challenge. The signature over it is checked after.
 */
export function signedChallengeOf(response: AuthenticationResponseJSON): string | null {
  try {
    const clientData: unknown = JSON.parse(
      Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'),
    );
    const challenge = (clientData as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === 'string' ? challenge : null;
  } catch {
    return null;
  }
}

/** Why a ceremony failed (logged and audited; the page says the same thing for each). */
export type CeremonyFailure = 'malformed' | 'unknown_credential' | 'wrong_user' | 'invalid' | 'counter';

export type RegistrationOutcome =
  | {
      ok: true;
      passkey: Omit<NewPasskey, 'sub' | 'name' | 'userHandle'>;
      userVerified: boolean;
      synced: boolean;
    }
  | { ok: false; reason: CeremonyFailure; detail?: string };

export type AuthenticationOutcome =
  | { ok: true; counter: number; backedUp: boolean; userVerified: boolean }
  | { ok: false; reason: CeremonyFailure; detail?: string };

/**
 * The browser's `PublicKeyCredential` as @simplewebauthn/browser serialises it (§5.1.8 toJSON),
 * sent back in a form field; `null` unless it is a JSON object with a string `id`.
 */
export function parseCredentialJson<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(
  text: string,
): T | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const { id, response } = value as { id?: unknown; response?: unknown };
    return typeof id === 'string' && typeof response === 'object' && response !== null ? (value as T) : null;
  } catch {
    return null;
  }
}

const failure = (error: unknown) => ({
  ok: false as const,
  reason: 'invalid' as const,
  detail: error instanceof Error ? error.message : String(error),
});

/**
 * §7.1 registration: challenge, origin, RP ID hash, user presence, algorithm and attestation
 * (`none`) are checked by the library. User verification is not required (see `registrationOptions`),
 * and its outcome is reported so the session can record it.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  expectedChallenge: string,
): Promise<RegistrationOutcome> {
  const { verifyRegistrationResponse } = await loadWebAuthnLibrary();
  try {
    const { verified, registrationInfo } = await verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!verified) return { ok: false, reason: 'invalid' };
    const { credential } = registrationInfo;
    return {
      ok: true,
      passkey: {
        id: credential.id,
        publicKey: base64url(credential.publicKey),
        counter: credential.counter,
        // §5.8.4: transports come from the browser (getTransports()), not from signed data: hints only.
        transports: response.response.transports ?? [],
        deviceType: registrationInfo.credentialDeviceType,
        backedUp: registrationInfo.credentialBackedUp,
        aaguid: registrationInfo.aaguid,
      },
      userVerified: registrationInfo.userVerified,
      synced: registrationInfo.credentialBackedUp,
    };
  } catch (error) {
    return failure(error);
  }
}

/**
 * §7.2 authentication of `response` against the stored credential. §7.2 step 6: when the
 * authenticator returns a `userHandle`, it must be the credential owner's. The library checks the
 * challenge, origin, RP ID hash, user presence, the signature and the signature counter (§6.1.1:
 * a counter that did not grow means a cloned authenticator, the assertion is refused).
 */
export async function verifyAuthentication(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  expectedChallenge: string,
  passkey: StoredPasskey,
): Promise<AuthenticationOutcome> {
  const { userHandle } = response.response;
  if (userHandle !== undefined && userHandle !== passkey.userHandle) {
    return { ok: false, reason: 'wrong_user' };
  }
  const { verifyAuthenticationResponse } = await loadWebAuthnLibrary();
  try {
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.id, publicKey: bytesOf(passkey.publicKey), counter: passkey.counter },
      requireUserVerification: false,
    });
    if (!verified) return { ok: false, reason: 'invalid' };
    return {
      ok: true,
      counter: authenticationInfo.newCounter,
      backedUp: authenticationInfo.credentialBackedUp,
      userVerified: authenticationInfo.userVerified,
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: /counter/i.test(detail) ? 'counter' : 'invalid', detail };
  }
}
