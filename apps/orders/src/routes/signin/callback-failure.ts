import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { isLocalReturnUrl } from '../../oidc/return-url.js';
import { BACK_TO_APP, type Page, sendPage } from '../../pages/page.js';
import { describe } from './context.js';

/** What a person reads when the sign-in callback fails; the technical reason goes in the detail. */
export const SIGN_IN_MESSAGES = {
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

export function signInFailed(message: string, detail: string, returnUrl = '/app'): Page {
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

/**
 * The page for a callback whose code could not be redeemed or whose response did not verify: the
 * provider's error, a refused token request, an unreachable provider, or a validation failure.
 */
export function failCallback(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  if (error instanceof client.AuthorizationResponseError) {
    // The provider answered with an error (RFC 6749 §4.1.2.1), e.g. access_denied.
    audit(request.log, AUDIT_EVENTS.signInFailed, { reason: `authorization_error:${error.error}` });
    const message = error.error === 'access_denied' ? SIGN_IN_MESSAGES.cancelled : SIGN_IN_MESSAGES.refused;
    return sendPage(reply, 400, signInFailed(message, `authorization error: ${error.error}`));
  }
  const refused = tokenEndpointErrorCode(error);
  if (refused === 'invalid_client') {
    audit(request.log, AUDIT_EVENTS.signInFailed, { reason: 'code_refused:invalid_client' });
    // Not the user's fault and not fixed by retrying: say so to the operator in plain words.
    request.log.error(
      { error: refused },
      "the authorization server refused this app's client credentials: check OIDC_CLIENT_SECRET (and OIDC_CLIENT_ID)",
    );
    return sendPage(
      reply,
      502,
      signInFailed(
        SIGN_IN_MESSAGES.misconfigured,
        `token endpoint: ${refused} (client authentication failed)`,
      ),
    );
  }
  if (refused !== null) {
    audit(request.log, AUDIT_EVENTS.signInFailed, { reason: `code_refused:${refused}` });
    return sendPage(reply, 400, signInFailed(SIGN_IN_MESSAGES.expired, `token endpoint: ${refused}`));
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

function isNetworkFailure(error: Error): boolean {
  return error.name === 'TimeoutError' || error.name === 'AbortError' || error.cause instanceof TypeError;
}

/**
 * The RFC 6749 §5.2 error code of a refused token request: from the JSON body, or from the
 * `WWW-Authenticate` challenge a 401 carries when the client authenticated with HTTP Basic
 * (openid-client reports that one as a challenge error). Null for anything else.
 */
function tokenEndpointErrorCode(error: unknown): string | null {
  if (error instanceof client.ResponseBodyError) return error.error;
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const named = error.cause.find((challenge) => challenge.parameters.error)?.parameters.error;
    // RFC 6749 §5.2: a token endpoint answers 401 only for invalid_client.
    return named ?? (error.status === 401 ? 'invalid_client' : null);
  }
  return null;
}
