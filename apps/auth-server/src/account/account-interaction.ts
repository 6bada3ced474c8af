import type { Client } from '@oidc-orders/oauth-core';

/**
 * The account page signs people in through the same interaction pages as any client (login,
 * second factor, enrolment), so every rule (lockout, step-up, recovery codes) holds there too. Its
 * interactions are marked by this parameter instead of an authorization request, and end with a
 * redirect to /account instead of a code.
 */
export const ACCOUNT_INTERACTION_PARAMS = { purpose: 'account' } as const;

export const isAccountInteraction = (params: Record<string, string>) =>
  params.purpose === ACCOUNT_INTERACTION_PARAMS.purpose && params.client_id === undefined;

/** Re-authentication for sensitive changes: the last method must be younger than this (seconds). */
export const RECENT_AUTHENTICATION_SECONDS = 300;

/** The account page as the "client" of its own interactions: no grant, no token, no consent. */
export const ACCOUNT_CLIENT: Client = {
  clientId: 'account',
  clientName: 'your account',
  secretHash: null,
  redirectUris: [],
  postLogoutRedirectUris: [],
  grantTypes: [],
  scopes: ['openid'],
  skipConsent: true,
  idTokenSigningAlg: 'RS256',
  allowedCorsOrigins: [],
  backchannelLogoutUri: null,
  frontchannelLogoutUri: null,
  refreshTokensWithoutOfflineAccess: false,
  refreshTokenAbsoluteTtl: 0,
  refreshTokenSlidingTtl: 0,
};
