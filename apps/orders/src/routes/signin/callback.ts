import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { mergeUserInfo, userClaims } from '../../oidc/claims.js';
import { sha256Base64url } from '../../oidc/keys.js';
import type { DiscoveredProvider } from '../../oidc/provider.js';
import { type SignInState, StateUnprotectError, unprotectState } from '../../oidc/state.js';
import { scheduleAccessToken } from '../../oidc/token-refresher.js';
import type { SessionTokens } from '../../oidc/token-sealing.js';
import { type Page, sendPage } from '../../pages/page.js';
import { failCallback, SIGN_IN_MESSAGES, signInFailed } from './callback-failure.js';
import {
  CORRELATION_COOKIE_PREFIX,
  describe,
  formFields,
  revokeQuietly,
  type SignInApp,
  type SignInKeys,
} from './context.js';

type TokenResponse = Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
type IdTokenClaims = NonNullable<ReturnType<TokenResponse['claims']>>;

/**
 * `POST /signin-oidc`, the form_post callback: open `state`, check the correlation cookie, redeem
 * the code (PKCE verifier, nonce and state checked by openid-client), start the session.
 */
export function registerSignInCallbackRoute(app: SignInApp, keys: SignInKeys): void {
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
    const opened = await openState(request, stateParameter, keys);
    if ('failure' in opened) return sendPage(reply, 400, opened.failure);
    const { state, correlationCookie } = opened;
    // Single use, whatever happens next.
    reply.clearCookie(correlationCookie, { path: '/', secure: true, httpOnly: true, sameSite: 'none' });

    const provider = app.oidc.require();
    let tokens: TokenResponse;
    try {
      tokens = await redeemCode(provider, state, body, stateParameter);
    } catch (error) {
      return failCallback(request, reply, error);
    }
    const idTokenClaims = tokens.claims();
    if (!idTokenClaims) return failCallback(request, reply, new Error('no ID token'));
    await startSession(app, request, reply, { provider, tokens, idTokenClaims });
    // 303: the browser follows with a GET (RFC 9110 §15.4.4), not a re-POST of the code.
    return reply.header('cache-control', 'no-store').redirect(state.returnUrl, 303);
  });
}

/**
 * Decrypts `state` and checks that this browser holds the correlation cookie whose hash it carries
 * (RFC 9700 §4.7.1: the response belongs to the browser that started the sign-in).
 */
async function openState(
  request: FastifyRequest,
  stateParameter: string,
  keys: SignInKeys,
): Promise<{ state: SignInState; correlationCookie: string } | { failure: Page }> {
  let state: SignInState;
  try {
    state = await unprotectState(stateParameter, keys.stateKey!);
  } catch (error) {
    if (!(error instanceof StateUnprotectError)) throw error;
    audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'state_invalid' });
    return {
      failure: signInFailed(
        SIGN_IN_MESSAGES.expired,
        'unable to unprotect state (it was not issued by this application, or it expired)',
      ),
    };
  }
  const correlationCookie = `${CORRELATION_COOKIE_PREFIX}${state.correlationId}`;
  const correlationValue = request.cookies[correlationCookie];
  if (correlationValue === undefined || !sameHash(sha256Base64url(correlationValue), state.correlationHash)) {
    audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'correlation_failed' });
    return {
      failure: signInFailed(
        SIGN_IN_MESSAGES.otherWindow,
        'correlation failed: this sign-in was not started in this browser, or its cookie expired',
        state.returnUrl,
      ),
    };
  }
  return { state, correlationCookie };
}

function redeemCode(
  provider: DiscoveredProvider,
  state: SignInState,
  body: URLSearchParams,
  stateParameter: string,
): Promise<TokenResponse> {
  // openid-client reads the form_post parameters from a Request; its URL is the redirect URI
  // of the authorization request (RFC 6749 §4.1.3: the token request must repeat it).
  const callback = new Request(state.redirectUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  return client.authorizationCodeGrant(provider.client, callback, {
    pkceCodeVerifier: state.codeVerifier,
    expectedState: stateParameter,
    expectedNonce: state.nonce,
    idTokenExpected: true,
  });
}

/** The session row (claims, the tokens OIDC_SAVE_TOKENS keeps, refresh schedule) and its cookie. */
async function startSession(
  app: SignInApp,
  request: FastifyRequest,
  reply: FastifyReply,
  {
    provider,
    tokens,
    idTokenClaims,
  }: { provider: DiscoveredProvider; tokens: TokenResponse; idTokenClaims: IdTokenClaims },
): Promise<void> {
  const { oidc } = app.config;
  let claims = userClaims(idTokenClaims);
  if (oidc.fetchUserinfo) claims = await withUserInfo(request, provider, tokens.access_token, claims);
  const saved: SessionTokens = {
    ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
    ...(oidc.saveTokens ? { accessToken: tokens.access_token } : {}),
    ...(oidc.saveTokens && tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
  };
  const sid = typeof idTokenClaims.sid === 'string' ? idTokenClaims.sid : null;
  await app.sessions.create(request, reply, {
    sub: idTokenClaims.sub,
    sid,
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
    { sub: idTokenClaims.sub, ...(sid !== null ? { sid } : {}) },
    'signed in',
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

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
