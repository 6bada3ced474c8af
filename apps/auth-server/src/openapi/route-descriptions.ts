/**
 * What each route of the authorization server is, for its OpenAPI document (GET /openapi.json,
 * src/plugins/openapi.ts). The protocol endpoints are described by their specifications; the
 * document names them and links the section. test/openapi.test.ts fails when a registered route
 * has no entry here, or an entry names a route that does not exist: the two cannot drift.
 */
import { tokenEndpointParameters } from '@oidc-orders/oauth-core';
import { OPERATIONS_ROUTE_DESCRIPTIONS, openApiPath, type RouteDescription } from '@oidc-orders/service-kit';
import { BROWSER_CORS_ENDPOINTS, ENDPOINTS } from '../endpoints.js';

/** The CORS preflight of each endpoint browsers call cross-origin (src/plugins/cors.ts). */
function preflightDescriptions(): Record<string, RouteDescription> {
  return Object.fromEntries(
    BROWSER_CORS_ENDPOINTS.map((endpoint) => [
      `OPTIONS ${endpoint.path}`,
      {
        summary: 'CORS preflight for browser-based public clients (their allowed_cors_origins)',
        tag: endpoint.tag,
      },
    ]),
  );
}

/** `/users/:sub` → `/users/{sub}`. */
const documented = (path: string) => openApiPath(path);

/** The administration API (src/routes/admin-api/): reads need admin.read, changes admin.write. */
const ADMIN_API_DESCRIPTIONS: Record<string, RouteDescription> = {
  [`GET ${ENDPOINTS.adminApiMetadata.path}`]: {
    summary:
      'Protected Resource Metadata of the admin API (RFC 9728 §3): its authorization server and scopes',
    tag: 'admin',
  },
  [`GET ${documented(ENDPOINTS.adminUsers.path)}`]: {
    summary:
      'Search users (q: username, name or e-mail part, or the sub): a JSON list, the next page in Link rel=next',
    tag: 'admin',
  },
  [`GET ${documented(ENDPOINTS.adminUser.path)}`]: {
    summary: 'One user: factors, linked identities, groups, source, live sessions and grants',
    tag: 'admin',
  },
  [`POST ${documented(ENDPOINTS.adminUserDisable.path)}`]: {
    summary: 'Disable a user: sign-in refused, sessions ended (back-channel logout), grants revoked',
    tag: 'admin',
  },
  [`POST ${documented(ENDPOINTS.adminUserEnable.path)}`]: { summary: 'Enable a disabled user', tag: 'admin' },
  [`POST ${documented(ENDPOINTS.adminUserResetMfa.path)}`]: {
    summary: "Remove a user's authenticator apps, passkeys and recovery codes; sessions end",
    tag: 'admin',
  },
  [`POST ${documented(ENDPOINTS.adminUserResetMail.path)}`]: {
    summary: 'Mail the user a password reset link (to their own verified address)',
    tag: 'admin',
  },
  [`GET ${documented(ENDPOINTS.adminUserSessions.path)}`]: {
    summary: "A user's live SSO sessions",
    tag: 'admin',
  },
  [`DELETE ${documented(ENDPOINTS.adminUserSessions.path)}`]: {
    summary:
      "End every session of a user (back-channel logout to its relying parties) and revoke the user's grants",
    tag: 'admin',
  },
  [`GET ${documented(ENDPOINTS.adminUserGrants.path)}`]: { summary: "A user's live grants", tag: 'admin' },
  [`DELETE ${documented(ENDPOINTS.adminSession.path)}`]: {
    summary: 'End one SSO session (back-channel logout, its grants revoked)',
    tag: 'admin',
  },
  [`DELETE ${documented(ENDPOINTS.adminGrant.path)}`]: {
    summary: 'Revoke one grant (its refresh and opaque access tokens stop)',
    tag: 'admin',
  },
  [`GET ${ENDPOINTS.adminClients.path}`]: {
    summary: 'Clients (read-only, from the seed or registered) with active grants and last use',
    tag: 'admin',
  },
  [`GET ${documented(ENDPOINTS.adminClient.path)}`]: {
    summary: 'One client with its live counts',
    tag: 'admin',
  },
  [`GET ${ENDPOINTS.adminResources.path}`]: {
    summary: 'Resources (read-only) with active grants and last use',
    tag: 'admin',
  },
  [`GET ${ENDPOINTS.adminProviders.path}`]: {
    summary: 'Upstream identity providers (read-only) with linked accounts and last sign-in',
    tag: 'admin',
  },
  [`GET ${ENDPOINTS.adminKeys.path}`]: {
    summary: 'Signing keys: state and age (public parts only)',
    tag: 'admin',
  },
  [`GET ${ENDPOINTS.adminAudit.path}`]: {
    summary:
      'Stored audit events, newest first, by sub, client_id, event and time (since, until); paged by Link rel=next',
    tag: 'admin',
  },
  [`GET ${ENDPOINTS.adminSeedPlan.path}`]: {
    summary:
      'What applying the current seed file would change (added, changed, enabled, disabled; operator changes undone)',
    tag: 'admin',
  },
  [`POST ${ENDPOINTS.adminKeysRotate.path}`]: {
    summary: 'Rotate the signing keys (new keys published now, signing after the safe delay)',
    tag: 'admin',
  },
};

const SIGN_IN_PAGE = 'HTML sign-in step of an authorization request (interaction)';

/**
 * Keyed `METHOD /path` with OpenAPI path templates (`{id}`); HEAD follows GET. Tags: oauth, openid,
 * pages, account, operations. `optional`: registered only when configured (Kerberos: KRB5_KTNAME).
 */
export const ROUTE_DESCRIPTIONS: Record<string, RouteDescription> = {
  'GET /': { summary: 'Landing page: the service, its discovery and JWKS links', tag: 'pages' },
  'GET /.well-known/openid-configuration': {
    summary: 'OpenID Provider metadata (OpenID Connect Discovery 1.0 §4, RFC 8414 §3)',
    tag: 'openid',
  },
  [`GET ${ENDPOINTS.jwks.path}`]: { summary: 'Public signing keys, JWK Set (RFC 7517 §5)', tag: 'openid' },
  [`GET ${ENDPOINTS.authorization.path}`]: {
    summary: 'Authorization endpoint (RFC 6749 §3.1; OpenID Connect Core §3.1.2)',
    tag: 'oauth',
    parameters: [
      'response_type',
      'client_id',
      'redirect_uri',
      'scope',
      'state',
      'nonce',
      'code_challenge',
      'code_challenge_method',
      'prompt',
      'max_age',
      'acr_values',
      'resource',
      'request',
      'request_uri',
    ],
  },
  [`POST ${ENDPOINTS.authorization.path}`]: {
    summary: 'Authorization endpoint, form-encoded (OpenID Connect Core §3.1.2.1)',
    tag: 'oauth',
  },
  [`POST ${ENDPOINTS.pushedAuthorization.path}`]: {
    summary: 'Pushed authorization request (RFC 9126 §2)',
    tag: 'oauth',
    parameters: ['client_id', 'response_type', 'redirect_uri', 'scope', 'code_challenge', 'request'],
  },
  [`POST ${ENDPOINTS.registration.path}`]: {
    summary: 'Dynamic Client Registration (RFC 7591 §3), when the seed has client_registration',
    tag: 'oauth',
    optional: true,
  },
  [`GET ${ENDPOINTS.registration.path}/{clientId}`]: {
    summary: 'Read a registered client (RFC 7592 §2.1, registration access token)',
    tag: 'oauth',
    optional: true,
  },
  [`PUT ${ENDPOINTS.registration.path}/{clientId}`]: {
    summary: 'Update a registered client (RFC 7592 §2.2, registration access token)',
    tag: 'oauth',
    optional: true,
  },
  [`DELETE ${ENDPOINTS.registration.path}/{clientId}`]: {
    summary: 'Delete a registered client (RFC 7592 §2.3, registration access token)',
    tag: 'oauth',
    optional: true,
  },
  [`POST ${ENDPOINTS.token.path}`]: {
    summary: 'Token endpoint (RFC 6749 §3.2): every grant of the registry',
    tag: 'oauth',
    // The registry's own list (oauth-core): a grant added there is described here with its parameters.
    parameters: tokenEndpointParameters(),
  },
  [`POST ${ENDPOINTS.introspection.path}`]: {
    summary: 'Token introspection for resource servers (RFC 7662 §2; JWT response RFC 9701)',
    tag: 'oauth',
    parameters: ['token', 'token_type_hint'],
  },
  [`POST ${ENDPOINTS.revocation.path}`]: {
    summary: 'Token revocation (RFC 7009 §2)',
    tag: 'oauth',
    parameters: ['token', 'token_type_hint'],
  },
  ...preflightDescriptions(),
  [`GET ${ENDPOINTS.userinfo.path}`]: {
    summary: 'UserInfo endpoint (OpenID Connect Core §5.3)',
    tag: 'openid',
  },
  [`POST ${ENDPOINTS.userinfo.path}`]: {
    summary: 'UserInfo endpoint, POST form (OpenID Connect Core §5.3.1)',
    tag: 'openid',
  },
  [`POST ${ENDPOINTS.deviceAuthorization.path}`]: {
    summary: 'Device authorization request (RFC 8628 §3.1)',
    tag: 'oauth',
    parameters: ['client_id', 'scope'],
  },
  [`GET ${ENDPOINTS.deviceVerification.path}`]: {
    summary: 'Device verification page: enter the user code (RFC 8628 §3.3)',
    tag: 'pages',
  },
  [`POST ${ENDPOINTS.deviceVerification.path}`]: {
    summary: 'Device verification page: submit the user code',
    tag: 'pages',
  },
  [`GET ${ENDPOINTS.endSession.path}`]: {
    summary: 'RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2)',
    tag: 'openid',
    parameters: ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'],
  },
  [`POST ${ENDPOINTS.endSession.path}`]: { summary: 'RP-initiated logout, confirmation form', tag: 'openid' },
  'GET /language': {
    summary: 'Language switcher: remembers the chosen page language in a cookie and returns to the page',
    tag: 'pages',
    parameters: ['set', 'return'],
  },
  'GET /interaction/{id}/login': { summary: `${SIGN_IN_PAGE}: username and password`, tag: 'pages' },
  'POST /interaction/{id}/login': { summary: `${SIGN_IN_PAGE}: submit username and password`, tag: 'pages' },
  'GET /interaction/{id}/otp': { summary: `${SIGN_IN_PAGE}: authenticator app code`, tag: 'pages' },
  'POST /interaction/{id}/otp': { summary: `${SIGN_IN_PAGE}: submit the code`, tag: 'pages' },
  'GET /interaction/{id}/recovery': { summary: `${SIGN_IN_PAGE}: recovery code`, tag: 'pages' },
  'POST /interaction/{id}/recovery': { summary: `${SIGN_IN_PAGE}: submit a recovery code`, tag: 'pages' },
  'GET /interaction/{id}/passkey': {
    summary: `${SIGN_IN_PAGE}: sign in with a passkey (alone, or after the password)`,
    tag: 'pages',
  },
  'POST /interaction/{id}/passkey': {
    summary: `${SIGN_IN_PAGE}: submit a WebAuthn assertion`,
    tag: 'pages',
  },
  'GET /interaction/{id}/enrol-passkey': { summary: `${SIGN_IN_PAGE}: set up a passkey`, tag: 'pages' },
  'POST /interaction/{id}/enrol-passkey': {
    summary: `${SIGN_IN_PAGE}: submit a WebAuthn registration`,
    tag: 'pages',
  },
  'GET /interaction/{id}/enrol': { summary: `${SIGN_IN_PAGE}: enrol a second factor`, tag: 'pages' },
  'POST /interaction/{id}/enrol': { summary: `${SIGN_IN_PAGE}: confirm the enrolment`, tag: 'pages' },
  'POST /interaction/{id}/continue': {
    summary: `${SIGN_IN_PAGE}: continue after the recovery codes were shown`,
    tag: 'pages',
  },
  'GET /interaction/{id}/consent': { summary: `${SIGN_IN_PAGE}: consent`, tag: 'pages' },
  'POST /interaction/{id}/consent': { summary: `${SIGN_IN_PAGE}: approve or deny`, tag: 'pages' },
  'GET /interaction/{id}/kerberos': {
    summary: `${SIGN_IN_PAGE}: Kerberos (SPNEGO, RFC 4559 §4)`,
    tag: 'pages',
    optional: true,
  },
  'GET /interaction/{id}/idp/{provider}': {
    summary: `${SIGN_IN_PAGE}: sign in at an upstream OpenID provider (code flow with PKCE)`,
    tag: 'pages',
    optional: true,
  },
  'POST /interaction/{id}/idp/{provider}/link': {
    summary: `${SIGN_IN_PAGE}: link the upstream identity to an existing account (its password)`,
    tag: 'pages',
    optional: true,
  },
  'GET /idp/{provider}/callback': {
    summary: 'Upstream provider redirection endpoint (RFC 6749 §3.1.2, RFC 9207 iss)',
    tag: 'pages',
    optional: true,
  },
  'GET /idp/{provider}/signed-out': {
    summary: 'Back from the upstream provider after its logout (RP-Initiated Logout 1.0 §3)',
    tag: 'pages',
    optional: true,
  },
  'POST /idp/{provider}/backchannel-logout': {
    summary: 'Back-channel logout from an upstream provider (OIDC Back-Channel Logout 1.0 §2.5)',
    tag: 'openid',
    optional: true,
  },
  'POST /account/providers/{id}/unlink': { summary: 'Unlink an upstream sign-in service', tag: 'account' },
  'GET /account': { summary: 'Account page of the signed-in user', tag: 'account' },
  'POST /account': { summary: 'Account page: sign in again for a sensitive change', tag: 'account' },
  'POST /account/password': { summary: 'Change the password', tag: 'account' },
  'POST /account/totp': { summary: 'Start adding an authenticator app', tag: 'account' },
  'POST /account/totp/confirm': {
    summary: 'Confirm an authenticator app with its first code',
    tag: 'account',
  },
  'POST /account/totp/{id}/rename': { summary: 'Rename an authenticator app', tag: 'account' },
  'POST /account/totp/{id}/remove': { summary: 'Remove an authenticator app', tag: 'account' },
  'POST /account/passkeys': {
    summary: 'Start adding a passkey (WebAuthn registration options)',
    tag: 'account',
  },
  'POST /account/passkeys/confirm': {
    summary: 'Finish adding a passkey (WebAuthn registration response)',
    tag: 'account',
  },
  'POST /account/passkeys/{id}/rename': { summary: 'Rename a passkey', tag: 'account' },
  'POST /account/passkeys/{id}/remove': { summary: 'Remove a passkey', tag: 'account' },
  'POST /account/recovery-codes': {
    summary: 'New recovery codes (the old set stops working)',
    tag: 'account',
  },
  'POST /account/apps/{clientId}/revoke': {
    summary: "Revoke an application's access (its tokens end)",
    tag: 'account',
  },
  'POST /account/sessions/sign-out-others': { summary: 'Sign out every other session', tag: 'account' },
  'POST /account/sessions/{id}/end': { summary: 'Sign out one other session of this user', tag: 'account' },
  'GET /assets/{name}': { summary: 'Stylesheet, scripts and images of the pages', tag: 'pages' },
  'GET /favicon.ico': { summary: 'The icon browsers ask for', tag: 'pages' },
  'GET /admin': { summary: 'Operator console: overview', tag: 'console' },
  'GET /admin/users': { summary: 'Operator console: users (search, paged)', tag: 'console' },
  'GET /admin/users/{sub}': { summary: 'Operator console: one user', tag: 'console' },
  'GET /admin/users/{sub}/{action}': {
    summary: 'Operator console: confirm an action on a user',
    tag: 'console',
  },
  'POST /admin/users/{sub}/{action}': {
    summary: 'Operator console: act on a user (audited)',
    tag: 'console',
  },
  'GET /admin/sessions': { summary: 'Operator console: active sessions', tag: 'console' },
  'GET /admin/clients': { summary: 'Operator console: clients', tag: 'console' },
  'GET /admin/clients/{clientId}': { summary: 'Operator console: one client', tag: 'console' },
  'GET /admin/keys': { summary: 'Operator console: signing keys', tag: 'console' },
  'GET /admin/keys/rotate': { summary: 'Operator console: confirm a key rotation', tag: 'console' },
  'POST /admin/keys/rotate': {
    summary: 'Operator console: rotate the signing keys (audited)',
    tag: 'console',
  },
  'GET /admin/audit': { summary: 'Operator console: audit log', tag: 'console' },
  'GET /admin/seed-plan': { summary: 'Operator console: what the seed file would change', tag: 'console' },
  ...ADMIN_API_DESCRIPTIONS,
  ...OPERATIONS_ROUTE_DESCRIPTIONS,
};
