import {
  ADMIN_API_PATH,
  type ClientAuthenticationEndpoint,
  PROTECTED_RESOURCE_WELL_KNOWN,
} from '@oidc-orders/oauth-core';

/**
 * The protocol endpoints of the server, one row each: the one place a path is written. Discovery
 * builds its URLs from it, client authentication its accepted assertion audiences, the CORS
 * plugin its preflight routes, the route files their paths, and the OpenAPI descriptions their
 * keys. test/endpoints.test.ts walks it against the running app, so a row without a route, or a
 * client-authenticating route without a row, fails there.
 */
export interface ProtocolEndpoint {
  readonly path: string;
  /** Its name in the discovery document (OIDC Discovery §3, RFC 8414 §2); none for a page. */
  readonly metadata?: string;
  /** The endpoint the client authenticates at (RFC 6749 §2.3), as oauth-core names it. */
  readonly clientAuthentication?: ClientAuthenticationEndpoint;
  /**
   * Called cross-origin by browser-based public clients (OAuth 2.0 for Browser-Based Applications
   * §6.3.4): answers a CORS preflight, and carries the CORS headers on its answers.
   */
  readonly browserCors: boolean;
  /**
   * Where its routes live: `oauth` is src/routes/oauth/ (back-channel, form or bearer, never cached);
   * `admin-api` is src/routes/admin-api/ (access tokens for the built-in admin resource, problem details);
   * `admin-console` is src/routes/admin-console/ (the operator console's pages, behind one guard).
   */
  readonly area: 'oauth' | 'front-channel' | 'discovery' | 'admin-api' | 'admin-console';
  /** The OpenAPI tag of its operations. */
  readonly tag: 'oauth' | 'openid' | 'pages' | 'admin';
  /**
   * The seed member that turns the endpoint on: without it the route does not exist and discovery
   * does not name it (discovery advertises exactly what is enabled).
   */
  readonly enabledBy?: 'client_registration';
}

/** Seed members that turn optional endpoints on (`ProtocolEndpoint.enabledBy`). */
export type EnabledFeatures = ReadonlySet<NonNullable<ProtocolEndpoint['enabledBy']>>;

export const ENDPOINTS = {
  authorization: {
    path: '/authorize',
    metadata: 'authorization_endpoint',
    browserCors: false,
    area: 'front-channel',
    tag: 'oauth',
  },
  token: {
    path: '/token',
    metadata: 'token_endpoint',
    clientAuthentication: 'token',
    browserCors: true,
    area: 'oauth',
    tag: 'oauth',
  },
  userinfo: {
    path: '/userinfo',
    metadata: 'userinfo_endpoint',
    browserCors: true,
    area: 'oauth',
    tag: 'openid',
  },
  jwks: { path: '/jwks', metadata: 'jwks_uri', browserCors: false, area: 'discovery', tag: 'openid' },
  revocation: {
    path: '/revoke',
    metadata: 'revocation_endpoint',
    clientAuthentication: 'revocation',
    browserCors: true,
    area: 'oauth',
    tag: 'oauth',
  },
  introspection: {
    path: '/introspect',
    metadata: 'introspection_endpoint',
    clientAuthentication: 'introspection',
    browserCors: false,
    area: 'oauth',
    tag: 'oauth',
  },
  endSession: {
    path: '/logout',
    metadata: 'end_session_endpoint',
    browserCors: false,
    area: 'front-channel',
    tag: 'openid',
  },
  // RFC 9126 §5.
  pushedAuthorization: {
    path: '/par',
    metadata: 'pushed_authorization_request_endpoint',
    clientAuthentication: 'pushed_authorization',
    browserCors: false,
    area: 'oauth',
    tag: 'oauth',
  },
  // RFC 8628 §4.
  deviceAuthorization: {
    path: '/device_authorization',
    metadata: 'device_authorization_endpoint',
    clientAuthentication: 'device_authorization',
    browserCors: false,
    area: 'oauth',
    tag: 'oauth',
  },
  // RFC 7591 §3: JSON in and out, only with the seed's `client_registration`.
  registration: {
    path: '/register',
    metadata: 'registration_endpoint',
    browserCors: false,
    area: 'oauth',
    tag: 'oauth',
    enabledBy: 'client_registration',
  },
  // RFC 7592 §2: the registration client URI, `registration_client_uri` in a registration response.
  registrationManagement: {
    path: '/register/:clientId',
    browserCors: false,
    area: 'oauth',
    tag: 'oauth',
    enabledBy: 'client_registration',
  },
  // RFC 8628 §3.3: where the user types the code; its URL is sent in the device response.
  deviceVerification: { path: '/device', browserCors: false, area: 'front-channel', tag: 'pages' },
  // RFC 9728 §3.1: the administration API's metadata, at the path derived from its identifier.
  adminApiMetadata: {
    path: `${PROTECTED_RESOURCE_WELL_KNOWN}${ADMIN_API_PATH}`,
    browserCors: false,
    area: 'discovery',
    tag: 'admin',
  },
  // The operator console: its pages live under this path (src/routes/admin-console/), behind one guard.
  adminConsole: { path: '/admin', browserCors: false, area: 'admin-console', tag: 'pages' },
  // The administration API (oauth-core admin-api.ts: the resource `<issuer>/admin/api`).
  adminUsers: adminApi('/users'),
  adminUser: adminApi('/users/:sub'),
  adminUserDisable: adminApi('/users/:sub/disable'),
  adminUserEnable: adminApi('/users/:sub/enable'),
  adminUserResetMfa: adminApi('/users/:sub/reset-mfa'),
  adminUserResetMail: adminApi('/users/:sub/reset-mail'),
  adminUserSessions: adminApi('/users/:sub/sessions'),
  adminUserGrants: adminApi('/users/:sub/grants'),
  adminSession: adminApi('/sessions/:sid'),
  adminGrant: adminApi('/grants/:grantId'),
  adminClients: adminApi('/clients'),
  adminClient: adminApi('/clients/:clientId'),
  adminResources: adminApi('/resources'),
  adminProviders: adminApi('/providers'),
  adminKeys: adminApi('/keys'),
  adminKeysRotate: adminApi('/keys/rotate'),
  adminAudit: adminApi('/audit'),
  adminSeedPlan: adminApi('/seed/plan'),
} as const satisfies Record<string, ProtocolEndpoint>;

/** A row of the administration API, its path under ADMIN_API_PATH. */
function adminApi<const Path extends string>(path: Path) {
  return {
    path: `${ADMIN_API_PATH}${path}` as `/admin/api${Path}`,
    browserCors: false,
    area: 'admin-api',
    tag: 'admin',
  } as const;
}

const rows: readonly ProtocolEndpoint[] = Object.values(ENDPOINTS);

/**
 * Discovery's endpoint URLs (`token_endpoint`: `${issuer}/token`, …), in the table's order; an
 * optional endpoint only when `enabled` names its seed member.
 */
export function discoveryEndpointUrls(
  issuer: string,
  enabled: EnabledFeatures = new Set(),
): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const row of rows) {
    if (row.metadata === undefined) continue;
    if (row.enabledBy !== undefined && !enabled.has(row.enabledBy)) continue;
    urls[row.metadata] = `${issuer}${row.path}`;
  }
  return urls;
}

/**
 * The public URL of each endpoint that authenticates clients: an assertion's accepted `aud`
 * (RFC 7523 §3, with the issuer also accepted by oauth-core).
 */
export function clientAuthenticationEndpointUrls(
  issuer: string,
): Record<ClientAuthenticationEndpoint, string> {
  const urls: Partial<Record<ClientAuthenticationEndpoint, string>> = {};
  for (const row of rows) {
    if (row.clientAuthentication !== undefined) urls[row.clientAuthentication] = `${issuer}${row.path}`;
  }
  return urls as Record<ClientAuthenticationEndpoint, string>;
}

/** The endpoints browsers call cross-origin: each answers a preflight. */
export const BROWSER_CORS_ENDPOINTS: readonly ProtocolEndpoint[] = rows.filter((row) => row.browserCors);

/**
 * The steps of an interaction, each a page at `/interaction/:id/<step>` (src/routes/interaction/,
 * whose guard loads the interaction for every one): the one place their names are written.
 */
export const INTERACTION_PAGES = [
  'login',
  'kerberos',
  'otp',
  'recovery',
  'passkey',
  'enrol',
  'enrol-passkey',
  'continue',
  'consent',
  'directory-password',
] as const;

export type InteractionPage = (typeof INTERACTION_PAGES)[number];

/** The route of an interaction step: `/interaction/:id/login`, … */
export const interactionPagePath = <Page extends InteractionPage>(page: Page) =>
  `/interaction/:id/${page}` as const;

/**
 * The other pages a person opens, one row each beside the endpoints above: the one place their
 * paths are written. Routes register them and links are built from them (with the issuer's base
 * path); test/page-paths.test.ts holds the table against the running app. `enabledBy`: the page
 * exists only with that part configured.
 */
export const PAGES = {
  start: { path: '/' },
  account: { path: '/account' },
  forgotPassword: { path: '/forgot-password', enabledBy: 'mail' },
  resetPassword: { path: '/reset-password', enabledBy: 'mail' },
  devMailbox: { path: '/dev/mailbox', enabledBy: 'dev-mailbox' },
  upstreamSignIn: { path: '/interaction/:id/idp/:provider', enabledBy: 'identity_providers' },
  upstreamLink: { path: '/interaction/:id/idp/:provider/link', enabledBy: 'identity_providers' },
  upstreamLinkMail: { path: '/interaction/:id/idp/:provider/link/mail', enabledBy: 'identity_providers' },
  upstreamMailedLink: { path: '/idp/:provider/link', enabledBy: 'identity_providers' },
  upstreamCallback: { path: '/idp/:provider/callback', enabledBy: 'identity_providers' },
  upstreamSignedOut: { path: '/idp/:provider/signed-out', enabledBy: 'identity_providers' },
} as const satisfies Record<
  string,
  { path: string; enabledBy?: 'mail' | 'dev-mailbox' | 'identity_providers' }
>;
