import type {
  PublicKeyCredentialCreationOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { PasskeyRepository } from './passkey-repository.js';
import {
  type CeremonyFailure,
  type PasskeyOwner,
  parseCredentialJson,
  type RelyingParty,
  registrationOptions,
  verifyRegistration,
} from './webauthn.js';
import type { CeremonyBinding, WebAuthnChallengeStore } from './webauthn-challenges.js';

/**
 * Adding a passkey (WebAuthn L3 §7.1), the same ceremony wherever it happens: on the account page
 * and inside a sign-in that requires a factor the user has none of. The callers bind the challenge
 * (to the session or to the interaction) and answer in their own pages.
 */
export interface PasskeyRegistration {
  passkeys: PasskeyRepository;
  challenges: WebAuthnChallengeStore;
  rp: RelyingParty;
}

/** Every failed registration says the same: the reason goes to the log. */
export const REGISTRATION_FAILED = 'The passkey could not be added. Please try again.';

/** A passkey's name as typed: trimmed, at most 60 characters, a default when empty. */
export const passkeyNameOf = (typed: string) => typed.trim().slice(0, 60) || 'Passkey';

/** §5.4 options for `user`, their challenge held server-side under `binding` (single use). */
export async function startPasskeyRegistration(
  deps: PasskeyRegistration,
  binding: CeremonyBinding,
  user: PasskeyOwner,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const userHandle = await deps.passkeys.userHandleOf(user.sub);
  const existing = await deps.passkeys.credentialsOf(user.sub);
  const options = await registrationOptions(deps.rp, user, userHandle, existing);
  await deps.challenges.issue(binding, { challenge: options.challenge, sub: user.sub, userHandle });
  return options;
}

export type PasskeyRegistrationOutcome =
  | { ok: true; credentialId: string; userVerified: boolean; synced: boolean }
  | { ok: false; reason: CeremonyFailure | 'no_challenge' | 'already_registered'; detail?: string };

/**
 * The browser's answer to `startPasskeyRegistration`: the pending challenge is taken (once), the
 * response verified against it, and the credential stored for `sub` under `name`.
 */
export async function finishPasskeyRegistration(
  deps: PasskeyRegistration,
  binding: CeremonyBinding,
  sub: string,
  credentialJson: string,
  name: string,
): Promise<PasskeyRegistrationOutcome> {
  const pending = await deps.challenges.consume(binding);
  const response = parseCredentialJson<RegistrationResponseJSON>(credentialJson);
  if (pending === null) return { ok: false, reason: 'no_challenge' };
  if (pending.sub !== sub || pending.userHandle === null || response === null) {
    return { ok: false, reason: 'malformed' };
  }
  const outcome = await verifyRegistration(deps.rp, response, pending.challenge);
  if (!outcome.ok) return outcome;
  const added = await deps.passkeys.add({ ...outcome.passkey, sub, userHandle: pending.userHandle, name });
  if (!added) return { ok: false, reason: 'already_registered' };
  return {
    ok: true,
    credentialId: outcome.passkey.id,
    userVerified: outcome.userVerified,
    synced: outcome.synced,
  };
}
