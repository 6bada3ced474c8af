/**
 * What each route of the authorization server is, for its OpenAPI document (GET /openapi.json,
 * src/plugins/openapi.ts). The protocol endpoints are described by their specifications; the
 * document names them and links the section. test/openapi.test.ts fails when a registered route
 * has no entry here, or an entry names a route that does not exist: the two cannot drift.
 */
import { tokenEndpointParameters } from '@oidc-orders/oauth-core';
import { OPERATIONS_ROUTE_DESCRIPTIONS, type RouteDescription } from '@oidc-orders/service-kit';
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
  ...OPERATIONS_ROUTE_DESCRIPTIONS,
};
