import type { FastifyPluginAsync } from 'fastify';
import { registerConsentRoutes } from './consent.js';
import { registerEnrolRoutes } from './enrol.js';
import { registerLoginRoutes } from './login.js';
import type { InteractionRoutesOptions } from './options.js';
import { registerPasskeyRoutes } from './passkey.js';
import { registerSecondFactorRoutes } from './second-factor.js';
import { createInteractionSteps } from './steps.js';

export * from './options.js';

/**
 * The pages of an interaction (README "Pages"), one file per page flow, all built on the shared
 * steps in ./steps.ts: login (and Kerberos), second factor (code, recovery code), enrolment,
 * passkeys (sign-in, second factor, enrolment), consent. (The end-session endpoint, which shares the SSO session but no interaction, is
 * ../end-session.ts.)
 */
export const interactionRoutes: FastifyPluginAsync<InteractionRoutesOptions> = async (app, options) => {
  const steps = createInteractionSteps(app, options);
  await registerLoginRoutes(app, steps, options);
  registerSecondFactorRoutes(app, steps, options);
  registerEnrolRoutes(app, steps, options);
  registerPasskeyRoutes(app, steps, options);
  registerConsentRoutes(app, steps, options);
};
