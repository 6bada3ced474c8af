import { OPERATIONS_ROUTE_DESCRIPTIONS, type RouteDescription } from '@oidc-orders/service-kit';

/**
 * What each route of the orders service is, for its OpenAPI document (GET /openapi.json,
 * src/plugins/openapi.ts). Request and response shapes come from the routes' TypeBox schemas;
 * this table names and tags them. test/openapi.test.ts fails when a registered route has no entry
 * here, or an entry names a route that does not exist. Tags: orders, users, bff, sign-in, pages,
 * operations.
 */
export const ROUTE_DESCRIPTIONS: Record<string, RouteDescription> = {
  'POST /orders': { summary: 'Place an order (x-api-key)', tag: 'orders' },
  'OPTIONS /orders': {
    summary: 'CORS preflight of the bearer API for ALLOWED_CORS_ORIGINS (GET only)',
    tag: 'orders',
  },
  'OPTIONS /orders/{id}': {
    summary: 'CORS preflight of the bearer API for ALLOWED_CORS_ORIGINS (GET only)',
    tag: 'orders',
  },
  'GET /orders': {
    summary: "The caller's orders (Bearer or DPoP access token with orders.read, RFC 6750 / RFC 9449)",
    tag: 'orders',
  },
  'GET /orders/{id}': { summary: 'One order (x-api-key, or an access token of its owner)', tag: 'orders' },
  'GET /.well-known/oauth-protected-resource': {
    summary: 'Protected resource metadata (RFC 9728), when RESOURCE_ID is an http(s) URL',
    tag: 'orders',
  },
  'POST /mcp': {
    summary:
      "Model Context Protocol server (Streamable HTTP): tools list_orders and place_order for the token's user",
    tag: 'orders',
  },
  'GET /users': { summary: 'Every user (x-api-key)', tag: 'users' },
  'POST /users': { summary: 'Create a user (x-api-key)', tag: 'users' },
  'GET /bff/user': {
    summary: 'The signed-in user of this browser session (backend for frontend)',
    tag: 'bff',
  },
  'GET /bff/orders': { summary: "The signed-in user's orders, through the session (X-CSRF: 1)", tag: 'bff' },
  'POST /bff/orders': { summary: 'Place an order through the session (X-CSRF: 1)', tag: 'bff' },
  'GET /': { summary: 'The session as JSON for API clients, a page for browsers', tag: 'sign-in' },
  'GET /login': { summary: 'Start the OpenID Connect sign-in (authorization code + PKCE)', tag: 'sign-in' },
  'GET /account': { summary: 'Go to the provider\'s account page ("Your account")', tag: 'sign-in' },
  'POST /signin-oidc': {
    summary: "The provider's form_post response (OAuth 2.0 Form Post Response Mode)",
    tag: 'sign-in',
  },
  'GET /logout': { summary: 'Sign-out page', tag: 'sign-in' },
  'POST /logout': { summary: 'Sign out here and at the provider (RP-Initiated Logout 1.0)', tag: 'sign-in' },
  'GET /signed-out': { summary: 'Signed-out page', tag: 'sign-in' },
  'POST /backchannel-logout': {
    summary: "The provider's logout token (OpenID Connect Back-Channel Logout 1.0 §2.5)",
    tag: 'sign-in',
  },
  'GET /app': { summary: 'The orders web app (a page)', tag: 'pages' },
  'GET /app/': { summary: 'The orders web app (a page)', tag: 'pages' },
  'GET /app/app.js': { summary: "The web app's script", tag: 'pages' },
  'GET /app/app.css': { summary: "The web app's stylesheet", tag: 'pages' },
  'GET /app/favicon.svg': { summary: 'The icon', tag: 'pages' },
  'GET /favicon.ico': { summary: 'The icon browsers ask for', tag: 'pages' },
  ...OPERATIONS_ROUTE_DESCRIPTIONS,
};
