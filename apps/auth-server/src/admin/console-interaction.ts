import type { Client } from '@oidc-orders/oauth-core';
import { ACCOUNT_CLIENT } from '../account/account-interaction.js';

/**
 * The operator console signs people in through the same interaction pages as any client (login,
 * second factor, enrolment), as the account page does. Its interactions are marked by this
 * parameter and end with a redirect to /admin. `level: 'mfa'` is the step-up: an admin whose
 * session has no second factor proves one (or enrols one first); the first sign-in asks only what
 * any sign-in asks, so a person who turns out not to be an admin is never made to enrol a factor.
 */
export const CONSOLE_INTERACTION_PARAMS = { purpose: 'admin' } as const;
export const CONSOLE_STEP_UP_PARAMS = { purpose: 'admin', level: 'mfa' } as const;

export const isConsoleInteraction = (params: Record<string, string>) =>
  params.purpose === CONSOLE_INTERACTION_PARAMS.purpose && params.client_id === undefined;

/** The console as the "client" of its own sign-in: no grant, no token, no consent. */
export const CONSOLE_CLIENT: Client = {
  ...ACCOUNT_CLIENT,
  clientId: 'admin-console',
  clientName: 'the operator console',
};

/** The step-up "client": the multi-factor level (oauth-core `requiredAcr`), enrolment when no factor. */
export const CONSOLE_STEP_UP_CLIENT: Client = { ...CONSOLE_CLIENT, requireMfa: true };

/** The client whose level an interaction of the console asks for. */
export const consoleClientOf = (params: Record<string, string>): Client =>
  params.level === CONSOLE_STEP_UP_PARAMS.level ? CONSOLE_STEP_UP_CLIENT : CONSOLE_CLIENT;
