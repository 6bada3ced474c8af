import { randomBytes, timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import * as client from 'openid-client';
import { AUDIT_EVENTS, audit } from '../audit.js';
import { InvalidReturnUrlError, SignInUnavailableError } from '../errors.js';
import { mergeUserInfo, userClaims } from '../oidc/claims.js';
import { deriveKey, sha256Base64url } from '../oidc/keys.js';
import { InvalidLogoutTokenError, verifyLogoutToken } from '../oidc/logout-token.js';
import type { DiscoveredProvider } from '../oidc/provider.js';
import { isLocalReturnUrl } from '../oidc/return-url.js';
import { isCrossSiteRequest, isValidSignOutCsrfToken, signOutCsrfToken } from '../oidc/sign-out-guard.js';
import {
  protectState,
  SIGN_IN_STATE_TTL_SECONDS,
  StateUnprotectError,
  unprotectState,
} from '../oidc/state.js';
import { scheduleAccessToken } from '../oidc/token-refresher.js';
import type { SessionTokens } from '../oidc/token-sealing.js';
import { BACK_TO_APP, type Page, prefersHtml, sendPage } from '../pages/page.js';
import { sendSignedOutPage, sendSignOutConfirmation } from '../pages/sign-out.js';
import { parseFormStrictly } from '../plugins/input-guard.js';
import { publicBaseUrl } from '../public-url.js';
import { homeSchema, loginSchema } from '../schemas/signin.js';

/** One cookie per sign-in attempt, so two tabs signing in at once do not overwrite each other's. */
const CORRELATION_COOKIE_PREFIX = '__Host-orders-correlation-';

/** Where the provider sends the browser after sign-out: the orders client's post_logout_redirect_uri. */
export const SIGNED_OUT_PATH = '/signed-out';

/**
 * The relying-party routes: `GET /` (protected page), `GET /login`, the form_post callback
 * `POST /signin-oidc`, `GET /logout` (RP-Initiated Logout) and `POST /backchannel-logout`.
 *
 * Sign-in is the authorization code flow with PKCE (RFC 7636, S256), `state`, `nonce` and
 * `response_mode=form_post`. Between the redirect and the callback nothing is stored server-side:
 * `state` is a JWE (key derived from SESSION_SECRET) carrying the return URL, the code verifier,
 * the nonce, the redirect URI and a hash of a per-attempt correlation cookie, which binds the
 * response to the browser that started the sign-in (RFC 9700 §4.7.1 CSRF protection).
 */
const signInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;
  const { oidc } = config;
  // Only form_post callbacks and back-channel logout are forms here; JSON stays the default elsewhere.
  await app.register(formbody, { parser: parseFormStrictly });

  // Without OIDC_ISSUER the API-key routes work and every sign-in route says why it cannot.
  app.addHook('onRequest', async () => {
    if (oidc.issuer === undefined || config.sessionSecret === undefined) {
      throw new SignInUnavailableError('not-configured');
    }
  });
  const stateKey =
    config.sessionSecret === undefined ? undefined : deriveKey(config.sessionSecret, 'sign-in state');
  const signOutKey =
    config.sessionSecret === undefined ? undefined : deriveKey(config.sessionSecret, 'sign-out csrf');

  async function startSignIn(request: FastifyRequest, reply: FastifyReply, returnUrl: string) {
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
      stateKey!,
    );
    const authorizationUrl = client.buildAuthorizationUrl(provider.client, {
      redirect_uri: redirectUri,
      scope: oidc.scopes,
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

  app.get('/', { schema: homeSchema }, async (request, reply) => {
    const session = await app.sessions.load(request);
    if (!session) return startSignIn(request, reply, '/');
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
    return startSignIn(request, reply, returnUrl);
  });

  app.post('/signin-oidc', async (request, reply) => {
    const body = formFields(request.body);
    const stateParameter = body?.get('state');
    if (!body || !stateParameter) {
      return sendPage(
        reply,
        400,
        signInFailed(SIGN_IN_MESSAGES.incomplete, 'unable to unprotect state (no state)'),
      );
    }
    let state: Awaited<ReturnType<typeof unprotectState>>;
    try {
      state = await unprotectState(stateParameter, stateKey!);
    } catch (error) {
      if (!(error instanceof StateUnprotectError)) throw error;
      audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'state_invalid' });
      return sendPage(
        reply,
        400,
        signInFailed(
          SIGN_IN_MESSAGES.expired,
          'unable to unprotect state (it was not issued by this application, or it expired)',
        ),
      );
    }
    const correlationCookie = `${CORRELATION_COOKIE_PREFIX}${state.correlationId}`;
    const correlationValue = request.cookies[correlationCookie];
    if (
      correlationValue === undefined ||
      !sameHash(sha256Base64url(correlationValue), state.correlationHash)
    ) {
      audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'correlation_failed' });
      return sendPage(
        reply,
        400,
        signInFailed(
          SIGN_IN_MESSAGES.otherWindow,
          'correlation failed: this sign-in was not started in this browser, or its cookie expired',
          state.returnUrl,
        ),
      );
    }
    // Single use, whatever happens next.
    reply.clearCookie(correlationCookie, { path: '/', secure: true, httpOnly: true, sameSite: 'none' });

    const provider = app.oidc.require();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      // openid-client reads the form_post parameters from a Request; its URL is the redirect URI
      // of the authorization request (RFC 6749 §4.1.3: the token request must repeat it).
      const callback = new Request(state.redirectUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: body.toString(),
      });
      tokens = await client.authorizationCodeGrant(provider.client, callback, {
        pkceCodeVerifier: state.codeVerifier,
        expectedState: stateParameter,
        expectedNonce: state.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      return failCallback(request, reply, error);
    }

    const idTokenClaims = tokens.claims();
    if (!idTokenClaims) return failCallback(request, reply, new Error('no ID token'));
    let claims = userClaims(idTokenClaims);
    if (oidc.fetchUserinfo) claims = await withUserInfo(request, provider, tokens.access_token, claims);

    const saved: SessionTokens = {
      ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
      ...(oidc.saveTokens ? { accessToken: tokens.access_token } : {}),
      ...(oidc.saveTokens && tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    };
    await app.sessions.create(request, reply, {
      sub: idTokenClaims.sub,
      sid: typeof idTokenClaims.sid === 'string' ? idTokenClaims.sid : null,
      claims,
      tokens: saved,
      ...(oidc.saveTokens
        ? scheduleAccessToken(tokens.expires_in, Date.now(), oidc.refreshSkewSeconds)
        : { accessTokenExpiresAt: null, accessTokenRefreshAt: null }),
    });
    if (!oidc.saveTokens && tokens.refresh_token) {
      // Not kept, so not needed: a refresh token nobody holds should not stay valid (RFC 7009).
      void revokeQuietly(request, provider, tokens.refresh_token);
    }
    audit(
      request.log,
      AUDIT_EVENTS.signInSucceeded,
      {
        sub: idTokenClaims.sub,
        ...(typeof idTokenClaims.sid === 'string' ? { sid: idTokenClaims.sid } : {}),
      },
      'signed in',
    );
    // 303: the browser follows with a GET (RFC 9110 §15.4.4), not a re-POST of the code.
    return reply.header('cache-control', 'no-store').redirect(state.returnUrl, 303);
  });

  /**
   * OIDC RP-Initiated Logout 1.0. A same-site navigation (or a client that sends no fetch
   * metadata) signs out at once; a request the browser marks cross-site only gets a question whose
   * button POSTs back with the session's CSRF token, so a link on another site cannot end the
   * session, revoke its refresh token and, through the id_token_hint, the provider's session.
   */
  app.get('/logout', async (request, reply) => {
    const publicBase = publicBaseUrl(config, request);
    if (isCrossSiteRequest(request, new URL(publicBase).origin)) {
      const session = await app.sessions.load(request);
      return sendSignOutConfirmation(reply, {
        action: `${publicBase}/logout`,
        csrfToken: signOutCsrfToken(signOutKey!, session?.id),
        providerOrigin: new URL(oidc.issuer!).origin,
      });
    }
    return signOut(request, reply);
  });

  app.post('/logout', async (request, reply) => {
    const session = await app.sessions.load(request);
    const csrf = formFields(request.body)?.get('csrf');
    if (!isValidSignOutCsrfToken(signOutKey!, session?.id, csrf)) {
      audit(request.log, AUDIT_EVENTS.logoutRefused, { reason: 'csrf' });
      return sendPage(reply, 403, {
        title: 'Not signed out',
        message:
          'The sign-out form expired or did not come from this application. Sign out again from the app.',
        detail: 'sign-out CSRF token missing or invalid',
      });
    }
    return signOut(request, reply);
  });

  app.get('/signed-out', async (_request, reply) =>
    sendSignedOutPage(reply, 'You are signed out of the orders application.'),
  );

  async function signOut(request: FastifyRequest, reply: FastifyReply) {
    const session = await app.sessions.end(request, reply);
    reply.header('cache-control', 'no-store');
    if (app.oidc.status !== 'ready') {
      return sendPage(reply, 200, {
        title: 'Signed out',
        message:
          'You are signed out of this application. The sign-in service cannot be reached right now, so you may still be signed in there.',
        actions: [BACK_TO_APP],
      });
    }
    const provider = app.oidc.require();
    if (session?.tokens.refreshToken) await revokeQuietly(request, provider, session.tokens.refreshToken);
    // OIDC RP-Initiated Logout 1.0 §2: the provider ends its session too, then sends the browser
    // back to a page that says so (not `/`, which would start a new sign-in at once).
    const parameters: Record<string, string> = {
      post_logout_redirect_uri: `${publicBaseUrl(config, request)}${SIGNED_OUT_PATH}`,
    };
    if (session?.tokens.idToken) parameters.id_token_hint = session.tokens.idToken;
    else parameters.client_id = oidc.clientId!;
    audit(request.log, AUDIT_EVENTS.logout, session ? { sub: session.sub } : {}, 'signed out');
    // 303: after the POST the browser follows with a GET (RFC 9110 §15.4.4).
    return reply.redirect(
      client.buildEndSessionUrl(provider.client, parameters).href,
      request.method === 'POST' ? 303 : 302,
    );
  }

  app.post('/backchannel-logout', async (request, reply) => {
    // OIDC Back-Channel Logout 1.0 §2.8: never cached, 200 on success, 400 when the token is bad.
    reply.header('cache-control', 'no-store');
    const body = formFields(request.body);
    const logoutToken = body?.get('logout_token');
    if (!logoutToken) {
      return reply.code(400).send({ statusCode: 400, message: 'logout_token is required' });
    }
    const provider = app.oidc.require();
    let target: Awaited<ReturnType<typeof verifyLogoutToken>>;
    try {
      target = await verifyLogoutToken(logoutToken, { provider, clientId: oidc.clientId! });
    } catch (error) {
      if (!(error instanceof InvalidLogoutTokenError)) throw error;
      audit(request.log, AUDIT_EVENTS.backchannelLogoutRejected, { reason: error.message });
      return reply.code(400).send({ statusCode: 400, message: `Invalid logout token: ${error.message}` });
    }
    const ended = await app.sessions.endForLogout(target);
    audit(request.log, AUDIT_EVENTS.backchannelLogout, {
      ...(target.sub ? { sub: target.sub } : {}),
      ...(target.sid ? { sid: target.sid } : {}),
      sessions: ended,
    });
    return reply.code(200).send();
  });

  function failCallback(request: FastifyRequest, reply: FastifyReply, error: unknown) {
    if (error instanceof client.AuthorizationResponseError) {
      // The provider answered with an error (RFC 6749 §4.1.2.1), e.g. access_denied.
      audit(request.log, AUDIT_EVENTS.signInFailed, { reason: `authorization_error:${error.error}` });
      const message = error.error === 'access_denied' ? SIGN_IN_MESSAGES.cancelled : SIGN_IN_MESSAGES.refused;
      return sendPage(reply, 400, signInFailed(message, `authorization error: ${error.error}`));
    }
    if (error instanceof client.ResponseBodyError) {
      audit(request.log, AUDIT_EVENTS.signInFailed, { reason: `code_refused:${error.error}` });
      if (error.error === 'invalid_client') {
        // Not the user's fault and not fixed by retrying: say so to the operator in plain words.
        request.log.error(
          { error: error.error },
          "the authorization server refused this app's client credentials: check OIDC_CLIENT_SECRET (and OIDC_CLIENT_ID)",
        );
        return sendPage(
          reply,
          502,
          signInFailed(
            SIGN_IN_MESSAGES.misconfigured,
            `token endpoint: ${error.error} (client authentication failed)`,
          ),
        );
      }
      return sendPage(reply, 400, signInFailed(SIGN_IN_MESSAGES.expired, `token endpoint: ${error.error}`));
    }
    if (error instanceof client.ClientError && isNetworkFailure(error)) {
      request.log.warn({ reason: describe(error) }, 'sign-in callback: authorization server unreachable');
      audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'provider_unreachable' });
      return sendPage(reply, 502, signInFailed(SIGN_IN_MESSAGES.unreachable, describe(error)));
    }
    // ID token or response validation (signature, iss, aud, exp, nonce, state, iss parameter…).
    request.log.warn({ reason: describe(error) }, 'sign-in callback: response validation failed');
    audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'response_invalid' });
    return sendPage(
      reply,
      400,
      signInFailed(SIGN_IN_MESSAGES.unverifiable, `response could not be validated: ${describe(error)}`),
    );
  }

  async function withUserInfo(
    request: FastifyRequest,
    provider: DiscoveredProvider,
    accessToken: string,
    claims: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    try {
      // OIDC Core §5.3.4: fetchUserInfo checks that UserInfo's `sub` is the ID token's.
      const userInfo = await client.fetchUserInfo(provider.client, accessToken, claims.sub as string);
      request.log.info({ claimNames: Object.keys(userInfo) }, 'UserInfo read');
      return mergeUserInfo(claims, userInfo);
    } catch (error) {
      // The ID token already identifies the user; missing extra claims do not fail the sign-in.
      request.log.warn(
        { reason: describe(error) },
        'UserInfo could not be read; using the ID token claims only',
      );
      return claims;
    }
  }

  async function revokeQuietly(request: FastifyRequest, provider: DiscoveredProvider, refreshToken: string) {
    try {
      await client.tokenRevocation(provider.client, refreshToken, { token_type_hint: 'refresh_token' });
    } catch (error) {
      request.log.warn({ reason: describe(error) }, 'refresh token revocation failed');
    }
  }
};

/** What a person reads when the sign-in callback fails; the technical reason goes in the detail. */
const SIGN_IN_MESSAGES = {
  otherWindow: 'This sign-in was started in another browser window or took too long. Start again.',
  expired: 'This sign-in took too long or was already used. Start again.',
  incomplete: 'The answer from the sign-in service was incomplete. Start again.',
  cancelled: 'The sign-in was cancelled. Start again when you are ready.',
  refused:
    'The sign-in service could not sign you in. Start again; if it keeps happening, tell the administrator.',
  unreachable: 'The sign-in service cannot be reached right now. Wait a little, then start again.',
  unverifiable:
    'The answer from the sign-in service could not be checked, so you were not signed in. Start again; if it keeps happening, tell the administrator.',
  misconfigured:
    'This app is not set up correctly to sign you in (the sign-in service does not recognise it). The administrator has been told in the log.',
} as const;

function signInFailed(message: string, detail: string, returnUrl = '/app'): Page {
  return {
    title: 'Sign-in did not complete',
    message,
    detail,
    actions: [
      {
        href: `/login?${new URLSearchParams({ returnUrl: isLocalReturnUrl(returnUrl) ? returnUrl : '/app' })}`,
        label: 'Start again',
      },
      BACK_TO_APP,
    ],
  };
}

/** A form body as URLSearchParams; a repeated field (an array from formbody) makes it invalid. */
function formFields(body: unknown): URLSearchParams | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const fields = new URLSearchParams();
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value !== 'string') return undefined;
    fields.append(name, value);
  }
  return fields;
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function isNetworkFailure(error: Error): boolean {
  return error.name === 'TimeoutError' || error.name === 'AbortError' || error.cause instanceof TypeError;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

export default fp(signInRoutes, {
  name: 'sign-in-routes',
  dependencies: ['config', 'oidc', 'session', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
