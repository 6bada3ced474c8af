import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { InvalidReturnUrlError } from '../../errors.js';
import { sha256Base64url } from '../../oidc/keys.js';
import { isLocalReturnUrl } from '../../oidc/return-url.js';
import { protectState, SIGN_IN_STATE_TTL_SECONDS } from '../../oidc/state.js';
import { prefersHtml } from '../../pages/page.js';
import { publicBaseUrl } from '../../public-url.js';
import { accountLinkSchema, homeSchema, loginSchema } from '../../schemas/signin.js';
import { CORRELATION_COOKIE_PREFIX, type SignInApp, type SignInKeys } from './context.js';

/**
 * Starting a sign-in: `GET /` (the protected page, which signs in when there is no session) and
 * `GET /login?returnUrl=`. Both redirect to the provider's authorization endpoint.
 */
export function registerSignInStartRoutes(app: SignInApp, keys: SignInKeys): void {
  const { oidc } = app.config;

  app.get('/', { schema: homeSchema }, async (request, reply) => {
    const session = await app.sessions.load(request);
    if (!session) return startSignIn(app, keys, request, reply, '/');
    reply.header('cache-control', 'no-store');
    // A person lands on the orders app; API clients keep the JSON summary (README "Endpoints").
    if (prefersHtml(request)) return reply.redirect('/app', 303);
    const name = session.claims.name;
    return {
      name: typeof name === 'string' ? name : null,
      sub: session.sub,
      hasAccessToken: oidc.saveTokens && session.tokens.accessToken !== undefined,
    };
  });

  app.get('/login', { schema: loginSchema }, async (request, reply) => {
    const returnUrl = request.query.returnUrl ?? '/';
    if (!isLocalReturnUrl(returnUrl)) throw new InvalidReturnUrlError();
    return startSignIn(app, keys, request, reply, returnUrl);
  });

  // "Your account": the provider's account page, told which client sent the person there so that
  // it links back here (it links only a registered client's registered home).
  app.get('/account', { schema: accountLinkSchema }, async (_request, reply) => {
    const issuer = app.oidc.require().issuer.replace(/\/$/, '');
    const from = new URLSearchParams({ from: oidc.clientId! });
    return reply.header('cache-control', 'no-store').redirect(`${issuer}/account?${from}`, 302);
  });
}

/**
 * The authorization code flow with PKCE (RFC 7636, S256), `state`, `nonce` and
 * `response_mode=form_post`. Nothing is stored server-side: `state` is a JWE carrying the return
 * URL, the code verifier, the nonce, the redirect URI and a hash of a per-attempt correlation
 * cookie, which binds the response to this browser (RFC 9700 §4.7.1 CSRF protection).
 */
async function startSignIn(
  app: SignInApp,
  keys: SignInKeys,
  request: FastifyRequest,
  reply: FastifyReply,
  returnUrl: string,
) {
  const { config } = app;
  const provider = app.oidc.require();
  const codeVerifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const correlationId = randomBytes(9).toString('base64url');
  const correlationValue = randomBytes(32).toString('base64url');
  const redirectUri = `${publicBaseUrl(config, request)}/signin-oidc`;
  const state = await protectState(
    {
      returnUrl,
      codeVerifier,
      nonce,
      correlationId,
      correlationHash: sha256Base64url(correlationValue),
      redirectUri,
    },
    keys.stateKey!,
  );
  const authorizationUrl = client.buildAuthorizationUrl(provider.client, {
    redirect_uri: redirectUri,
    scope: config.oidc.scopes,
    response_type: 'code',
    // OIDC Form Post Response Mode: the code arrives in a POST body, never in a URL that could
    // end up in history, logs or a Referer header.
    response_mode: 'form_post',
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  // SameSite=None: the callback is a cross-site POST from the provider's page, which would not
  // carry a Lax cookie. Secure is required with None (and by the __Host- prefix).
  reply.setCookie(`${CORRELATION_COOKIE_PREFIX}${correlationId}`, correlationValue, {
    path: '/',
    secure: true,
    httpOnly: true,
    sameSite: 'none',
    maxAge: SIGN_IN_STATE_TTL_SECONDS,
  });
  return reply.header('cache-control', 'no-store').redirect(authorizationUrl.href, 302);
}
