import { issueAuthenticationCeremony, registerPasskeyRoutes } from '../passkey.js';
import type { SignInMethod } from './types.js';

/**
 * Passkeys as a way in (README "Passkeys"): the login page's button runs a discoverable-credential
 * ceremony and posts it to the passkey page, which ../passkey.ts serves for the sign-in and for the
 * second factor (with the enrolment page beside it). Always on: WebAuthn needs no configuration
 * beyond ISSUER.
 */
export const passkeyMethod = {
  name: 'passkey',
  enabledWith: () => ({}),
  async loginPage(_enabled, loaded, { steps, options }) {
    const passkey = await issueAuthenticationCeremony(options, loaded, null, []);
    return { passkey: { ...passkey, action: steps.pageUrl(loaded.interaction, 'passkey') } };
  },
  register(_enabled, app, { steps, options }) {
    registerPasskeyRoutes(app, steps, options);
  },
} satisfies SignInMethod<unknown, object>;
