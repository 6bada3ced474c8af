import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { SignInUnavailableError } from '../errors.js';
import { deriveKey } from '../oidc/keys.js';
import { parseFormStrictly } from '../plugins/input-guard.js';
import { registerBackChannelLogoutRoute } from './signin/backchannel-logout.js';
import { registerSignInCallbackRoute } from './signin/callback.js';
import type { SignInKeys } from './signin/context.js';
import { registerSignOutRoutes } from './signin/sign-out.js';
import { registerSignInStartRoutes } from './signin/start.js';

export { SIGNED_OUT_PATH } from './signin/sign-out.js';

/**
 * The relying-party routes, one file per flow under `signin/`: starting a sign-in (`GET /`,
 * `GET /login`, start.ts), the form_post callback (`POST /signin-oidc`, callback.ts), RP-Initiated
 * Logout (`GET|POST /logout`, `GET /signed-out`, sign-out.ts) and `POST /backchannel-logout`.
 *
 * Sign-in is the authorization code flow with PKCE (RFC 7636, S256), `state`, `nonce` and
 * `response_mode=form_post`. Between the redirect and the callback nothing is stored server-side:
 * `state` is a JWE (key derived from SESSION_SECRET) carrying the return URL, the code verifier,
 * the nonce, the redirect URI and a hash of a per-attempt correlation cookie, which binds the
 * response to the browser that started the sign-in (RFC 9700 §4.7.1 CSRF protection).
 */
const registerSignInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;
  // Only form_post callbacks and back-channel logout are forms here; JSON stays the default elsewhere.
  await app.register(formbody, { parser: parseFormStrictly });

  // Without OIDC_ISSUER the API-key routes work and every sign-in route says why it cannot.
  app.addHook('onRequest', async () => {
    if (config.oidc.issuer === undefined || config.sessionSecret === undefined) {
      throw new SignInUnavailableError('not-configured');
    }
  });
  const secret = config.sessionSecret;
  const keys: SignInKeys = {
    stateKey: secret === undefined ? undefined : deriveKey(secret, 'sign-in state'),
    signOutKey: secret === undefined ? undefined : deriveKey(secret, 'sign-out csrf'),
  };

  registerSignInStartRoutes(app, keys);
  registerSignInCallbackRoute(app, keys);
  registerSignOutRoutes(app, keys);
  registerBackChannelLogoutRoute(app);
};

export const signInRoutes = fp(registerSignInRoutes, {
  name: 'sign-in-routes',
  dependencies: ['config', 'oidc', 'session', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
