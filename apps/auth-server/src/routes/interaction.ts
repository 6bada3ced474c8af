import {
  type AuthorizationRequest,
  type Client,
  dummyPasswordVerify,
  type OAuthError,
  type ProtocolStores,
  type TokenVerifier,
  type User,
  verifyPassword,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../audit.js';
import type {
  AuthorizationFlow,
  InteractionProgress,
  NextStep,
  SignInRequirements,
} from '../interaction/authorization-flow.js';
import { collectAuthorizationParams } from '../interaction/authorization-params.js';
import type { ConsentRepository } from '../interaction/consent-repository.js';
import { type CsrfPurpose, csrfTokenFor, isValidCsrfToken } from '../interaction/csrf.js';
import type { Interaction, InteractionRepository } from '../interaction/interaction-repository.js';
import type { SsoSession } from '../interaction/sso-session-repository.js';
import { renderConsentPage } from '../pages/consent.js';
import { renderLoginPage } from '../pages/login.js';
import { sendLogoutConfirmPage } from '../pages/logout-confirm.js';
import { sendHtml } from '../pages/respond.js';
import { sendSignedOutPage } from '../pages/signed-out.js';
import { hashCookieValue } from '../plugins/session.js';
import {
  formActionSourcesOf,
  type PageContext,
  respondToClient,
  respondToValidationError,
  respondWithOAuthError,
  sendErrorPage,
  targetOf,
} from './authorization-reply.js';
import { type KerberosSignInOptions, kerberosSignInRoutes } from './kerberos-sign-in.js';

/** One login attempt, as a rate limiter sees it. */
export interface LoginAttempt {
  ip: string;
  username: string;
}

/** What a guard decides before the password is checked; a refusal says how long to wait. */
export type LoginAttemptDecision =
  | { allowed: true }
  | { allowed: false; limit: 'username' | 'ip'; retryAfterSeconds: number };

/**
 * Throttles login attempts per IP and per username (src/http/login-attempt-limiter.ts). `allow`
 * runs before the password is checked; refusing answers 429 (with `Retry-After`) without checking it.
 */
export interface LoginAttemptGuard {
  allow(attempt: LoginAttempt): Promise<boolean | LoginAttemptDecision>;
  recordFailure(attempt: LoginAttempt): Promise<void>;
  recordSuccess(attempt: LoginAttempt): Promise<void>;
}

/** The step that ends an interaction: signed in, consent given (or not needed). */
export type CompleteStep = Extract<NextStep, { kind: 'complete' }>;

/**
 * What an interaction is for, once loaded and re-validated: answering an /authorize request (code
 * or error to the client's redirect URI) or approving a device (RFC 8628). Login and consent work
 * the same for both; only the ending differs.
 */
export interface InteractionPurpose {
  client: Client;
  requirements: SignInRequirements;
  /** OIDC `login_hint`, pre-filled on the login page. */
  loginHint: string | undefined;
  /** CSP `form-action` sources the pages need beyond 'self' (the client's redirect URI origin). */
  formActionSources: string[];
  /** Extra text on the consent page. */
  consentNotice?: string;
  /** Called once the interaction is consumed and the user consented. */
  complete(reply: FastifyReply, step: CompleteStep): Promise<FastifyReply>;
  /** Called once the interaction is consumed after the user pressed Deny. */
  deny(reply: FastifyReply, sub: string | null): Promise<FastifyReply>;
  /** Called once the interaction is consumed when `nextStep` ended in an error. */
  fail(reply: FastifyReply, error: OAuthError): Promise<FastifyReply>;
}

/**
 * Resolves interactions that carry a device code hash (started by the verification page). Returns
 * `null` after sending a page when the device code can no longer be approved.
 */
export type DevicePurposeResolver = (
  deviceCodeHash: string,
  reply: FastifyReply,
) => Promise<InteractionPurpose | null>;

export interface InteractionRoutesOptions {
  flow: AuthorizationFlow;
  stores: ProtocolStores;
  interactions: InteractionRepository;
  consents: ConsentRepository;
  /** Verifies `id_token_hint` at /logout (signature and issuer; expiry ignored). */
  verifier: TokenVerifier;
  pageContext: PageContext;
  nowSeconds: () => number;
  loginAttemptGuard?: LoginAttemptGuard;
  /** Device verification (src/routes/device.ts); without it, device interactions are refused. */
  resolveDevicePurpose?: DevicePurposeResolver;
  /** Kerberos single sign-on (src/routes/kerberos-sign-in.ts); without it the login page has no link. */
  kerberos?: KerberosSignIn;
}

/** How a sign-in step was completed (README "Kerberos": the ID token's `amr`). */
export type SignInMethod = 'password' | 'kerberos';

/**
 * RFC 8176 §2 `amr` of each sign-in method: `pwd` for a password; `wia` ("Windows integrated
 * authentication") for Kerberos through HTTP Negotiate, whatever the desktop runs (README "Kerberos").
 */
const AMR_OF: Record<SignInMethod, string[]> = { password: ['pwd'], kerberos: ['wia'] };

/** The Kerberos route's own dependencies; the interaction steps are lent by these routes. */
export type KerberosSignIn = Omit<KerberosSignInOptions<unknown>, 'steps' | 'pageContext'>;

/** Guards written before decisions carried a retry time answer a plain boolean. */
function normalizeDecision(decision: boolean | LoginAttemptDecision): LoginAttemptDecision {
  if (typeof decision !== 'boolean') return decision;
  return decision ? { allowed: true } : { allowed: false, limit: 'ip', retryAfterSeconds: 60 };
}

/** Tells a locked-out person when to come back (the same time as `Retry-After`). */
export function tooManyAttemptsMessage(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  const wait =
    retryAfterSeconds < 60 ? `${retryAfterSeconds} seconds` : `${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `Too many failed sign-in attempts. Please try again in ${wait}.`;
}

/** Same text for an unknown user and a wrong password, so the page does not reveal which usernames exist. */
export const INVALID_CREDENTIALS_MESSAGE = 'Invalid username or password.';

interface LoadedInteraction {
  interaction: Interaction;
  browserKey: string;
  purpose: InteractionPurpose;
}

const stringField = (body: unknown, name: string): string | undefined => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

/** Login, consent and logout pages (README "Pages"). */
export const interactionRoutes: FastifyPluginAsync<InteractionRoutesOptions> = async (app, options) => {
  const { flow, stores, interactions, consents, pageContext } = options;
  const pageUrl = (id: string, page: 'login' | 'consent' | 'kerberos') =>
    `${pageContext.basePath}/interaction/${id}/${page}`;

  /**
   * The interaction named in the URL, if it is live and was started by this browser; otherwise an
   * error page has been sent and `null` is returned.
   */
  async function loadInteraction(
    request: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ): Promise<LoadedInteraction | null> {
    const interaction = await interactions.findActive(request.params.id, options.nowSeconds());
    if (interaction === null) {
      sendErrorPage(
        reply,
        400,
        {
          title: 'This sign-in request has expired',
          message: 'The sign-in took too long or was already completed.',
          code: 'interaction_expired',
        },
        pageContext,
      );
      return null;
    }
    const browserKey = app.ssoSessions.browserKey(request);
    if (browserKey === null || hashCookieValue(browserKey) !== interaction.browserHash) {
      // The interaction is bound to the browser that started it: a link copied to another
      // browser (or a victim lured into someone else's sign-in) cannot complete it.
      sendErrorPage(
        reply,
        403,
        {
          title: 'Sign-in started in another browser',
          message: 'Please start signing in again from the application, in this browser.',
          code: 'interaction_browser_mismatch',
        },
        pageContext,
      );
      return null;
    }
    if (interaction.deviceCodeHash) {
      // Re-checked at every step: the code may have expired or been decided in another tab.
      const purpose = options.resolveDevicePurpose
        ? await options.resolveDevicePurpose(interaction.deviceCodeHash, reply)
        : null;
      if (purpose === null) {
        if (!reply.sent) sendAlreadyCompleted(reply);
        return null;
      }
      return { interaction, browserKey, purpose };
    }
    try {
      // Re-validated at every step: the client may have been changed or removed meanwhile.
      const authorizationRequest = await flow.revalidate(interaction.request);
      return { interaction, browserKey, purpose: authorizationPurpose(interaction, authorizationRequest) };
    } catch (error) {
      await respondToValidationError(reply, error, pageContext, 303);
      return null;
    }
  }

  /** The /authorize ending: the code, or the error, goes to the client's redirect URI. */
  function authorizationPurpose(
    interaction: Interaction,
    authorizationRequest: AuthorizationRequest,
  ): InteractionPurpose {
    const target = targetOf(authorizationRequest, pageContext);
    return {
      client: authorizationRequest.client,
      requirements: authorizationRequest,
      loginHint: interaction.request.params.login_hint,
      formActionSources: formActionSourcesOf(authorizationRequest.redirectUri),
      async complete(reply, step) {
        let code: string;
        try {
          code = await flow.issueCode(authorizationRequest, step);
        } catch (error) {
          return respondToValidationError(reply, error, pageContext, 303);
        }
        return respondToClient(reply, target, { code }, pageContext, 303);
      },
      async deny(reply) {
        // RFC 6749 §4.1.2.1: "access_denied — The resource owner or authorization server denied the request."
        return respondToClient(
          reply,
          target,
          { error: 'access_denied', error_description: 'the user denied the request' },
          pageContext,
          303,
        );
      },
      async fail(reply, error) {
        return respondWithOAuthError(reply, target, error, pageContext, 303);
      },
    };
  }

  function checkCsrf(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    purpose: CsrfPurpose,
  ) {
    if (
      isValidCsrfToken(stringField(request.body, 'csrf'), loaded.browserKey, purpose, loaded.interaction.id)
    ) {
      return true;
    }
    sendErrorPage(
      reply,
      403,
      {
        title: 'This form has expired',
        message: 'The form could not be verified. Please go back, reload the page and try again.',
        code: 'csrf_token_invalid',
      },
      pageContext,
    );
    return false;
  }

  const progressOf = (interaction: Interaction): InteractionProgress => ({
    loginSid: interaction.loginSid,
    approvedScopes: interaction.approvedScopes,
  });

  function sendLoginPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    username?: string,
    errorMessage?: string,
  ) {
    const id = loaded.interaction.id;
    const page = renderLoginPage({
      clientName: loaded.purpose.client.clientName,
      csrfToken: csrfTokenFor(loaded.browserKey, 'login', id),
      // OIDC Core §3.1.2.1 login_hint pre-fills the username.
      username: username ?? loaded.purpose.loginHint,
      errorMessage,
      basePath: pageContext.basePath,
      kerberosHref: options.kerberos ? pageUrl(id, 'kerberos') : undefined,
      // The Kerberos challenge's body is this form too: it must post to the login URL.
      formAction: options.kerberos ? pageUrl(id, 'login') : undefined,
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  /** A second submission (double click, back button) after the interaction was consumed. */
  function sendAlreadyCompleted(reply: FastifyReply) {
    return sendErrorPage(
      reply,
      400,
      {
        title: 'This sign-in request was already completed',
        message: 'Return to the application; it may already have signed you in.',
        code: 'interaction_consumed',
      },
      pageContext,
    );
  }

  /** Finishes the interaction: consume it (exactly once), then let its purpose answer. */
  async function complete(reply: FastifyReply, loaded: LoadedInteraction, step: CompleteStep) {
    const consumed = await interactions.consume(
      loaded.interaction.id,
      loaded.interaction.browserHash,
      options.nowSeconds(),
    );
    if (consumed === null) return sendAlreadyCompleted(reply);
    return loaded.purpose.complete(reply, step);
  }

  /** After a login or an approval: the next page, or the end of the interaction. */
  async function proceed(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    session: SsoSession | null,
    progress: InteractionProgress,
  ) {
    const step = await flow.nextStep(loaded.purpose.requirements, session, progress);
    switch (step.kind) {
      case 'login':
      case 'consent':
        return reply
          .header('cache-control', 'no-store')
          .redirect(pageUrl(loaded.interaction.id, step.kind), 303);
      case 'complete':
        return complete(reply, loaded, step);
      case 'error': {
        await interactions.consume(
          loaded.interaction.id,
          loaded.interaction.browserHash,
          options.nowSeconds(),
        );
        return loaded.purpose.fail(reply, step.error);
      }
    }
  }

  // ─── Login ─────────────────────────────────────────────────────────────────────────────────────

  app.get<{ Params: { id: string } }>('/interaction/:id/login', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null) return reply;
    return sendLoginPage(reply, loaded, 200);
  });

  app.post<{ Params: { id: string } }>('/interaction/:id/login', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null || !checkCsrf(request, reply, loaded, 'login')) return reply;

    const username = stringField(request.body, 'username') ?? '';
    const password = stringField(request.body, 'password') ?? '';
    const attempt: LoginAttempt = { ip: request.ip, username };
    const clientId = loaded.purpose.client.clientId;
    if (options.loginAttemptGuard) {
      const decision = normalizeDecision(await options.loginAttemptGuard.allow(attempt));
      if (!decision.allowed) {
        audit(request.log, AUDIT_EVENTS.rateLimitExceeded, {
          limit: decision.limit === 'username' ? 'login_username' : 'login_ip',
          ip: request.ip,
          client_id: clientId,
          retry_after_seconds: decision.retryAfterSeconds,
        });
        // RFC 6585 §4: 429 with Retry-After; the page says the same in words.
        reply.header('retry-after', String(decision.retryAfterSeconds));
        return sendLoginPage(
          reply,
          loaded,
          429,
          username,
          tooManyAttemptsMessage(decision.retryAfterSeconds),
        );
      }
    }

    const user = username === '' ? null : await stores.users.findUserByUsername(username);
    // An unknown username costs the same scrypt run as a known one: timing does not tell them apart.
    let valid = false;
    if (user === null) await dummyPasswordVerify();
    else valid = await verifyPassword(password, user.passwordHash);
    if (user === null || !valid) {
      await options.loginAttemptGuard?.recordFailure(attempt);
      audit(request.log, AUDIT_EVENTS.loginFailed, {
        reason: user === null ? 'unknown_user' : 'wrong_password',
        ...(user === null ? {} : { sub: user.sub }),
        client_id: clientId,
        ip: request.ip,
      });
      return sendLoginPage(reply, loaded, 401, username, INVALID_CREDENTIALS_MESSAGE);
    }
    await options.loginAttemptGuard?.recordSuccess(attempt);
    audit(request.log, AUDIT_EVENTS.loginSucceeded, {
      sub: user.sub,
      client_id: clientId,
      ip: request.ip,
      method: 'password',
    });
    return signedIn(request, reply, loaded, user, 'password');
  });

  /** A sign-in method succeeded for `user`: the SSO session starts (or renews), the interaction goes on. */
  async function signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    user: User,
    method: SignInMethod,
  ) {
    const session = await app.ssoSessions.start(request, reply, user.sub, AMR_OF[method]);
    await interactions.recordLogin(loaded.interaction.id, session.id);
    return proceed(reply, loaded, session, { ...progressOf(loaded.interaction), loginSid: session.id });
  }

  if (options.kerberos) {
    await app.register(kerberosSignInRoutes<LoadedInteraction>(), {
      ...options.kerberos,
      pageContext,
      steps: {
        load: loadInteraction,
        clientIdOf: (loaded) => loaded.purpose.client.clientId,
        showLoginPage: (reply, loaded, status, message) =>
          sendLoginPage(reply, loaded, status, undefined, message),
        signedIn: (request, reply, loaded, user) => signedIn(request, reply, loaded, user, 'kerberos'),
      },
    });
  }

  // ─── Consent ───────────────────────────────────────────────────────────────────────────────────

  app.get<{ Params: { id: string } }>('/interaction/:id/consent', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null) return reply;
    const session = await app.ssoSessions.current(request);
    const step = await flow.nextStep(loaded.purpose.requirements, session, progressOf(loaded.interaction));
    if (step.kind === 'login' || step.kind === 'error') {
      return reply.header('cache-control', 'no-store').redirect(pageUrl(loaded.interaction.id, 'login'), 303);
    }
    const page = renderConsentPage({
      clientName: loaded.purpose.client.clientName,
      userDisplayName: step.user.name ?? step.user.username,
      scopes: step.scopes,
      csrfToken: csrfTokenFor(loaded.browserKey, 'consent', loaded.interaction.id),
      basePath: pageContext.basePath,
      notice: loaded.purpose.consentNotice,
    });
    return sendHtml(reply, 200, page, { formActionSources: loaded.purpose.formActionSources });
  });

  app.post<{ Params: { id: string } }>('/interaction/:id/consent', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null || !checkCsrf(request, reply, loaded, 'consent')) return reply;
    const decision = stringField(request.body, 'decision');
    if (decision !== 'approve' && decision !== 'deny') {
      return sendErrorPage(
        reply,
        400,
        { title: 'Unknown choice', message: 'Please choose Allow or Deny.', code: 'invalid_request' },
        pageContext,
      );
    }
    const session = await app.ssoSessions.current(request);

    if (decision === 'deny') {
      const consumed = await interactions.consume(
        loaded.interaction.id,
        loaded.interaction.browserHash,
        options.nowSeconds(),
      );
      if (consumed === null) return sendAlreadyCompleted(reply);
      audit(request.log, AUDIT_EVENTS.consentDenied, {
        ...(session ? { sub: session.sub } : {}),
        client_id: loaded.purpose.client.clientId,
      });
      return loaded.purpose.deny(reply, session?.sub ?? null);
    }

    const step = await flow.nextStep(loaded.purpose.requirements, session, progressOf(loaded.interaction));
    if (step.kind === 'login' || step.kind === 'error') {
      // The session ended (or changed) while the consent page was open: sign in first.
      return reply.header('cache-control', 'no-store').redirect(pageUrl(loaded.interaction.id, 'login'), 303);
    }
    await consents.remember(step.user.sub, loaded.purpose.client.clientId, step.scopes, options.nowSeconds());
    await interactions.recordApproval(loaded.interaction.id, step.scopes);
    audit(request.log, AUDIT_EVENTS.consentGranted, {
      sub: step.user.sub,
      client_id: loaded.purpose.client.clientId,
      scopes: [...step.scopes],
    });
    return proceed(reply, loaded, session, {
      ...progressOf(loaded.interaction),
      approvedScopes: step.scopes,
    });
  });

  // ─── Logout (OIDC RP-Initiated Logout 1.0) ─────────────────────────────────────────────────────

  async function logout(request: FastifyRequest, reply: FastifyReply, source: unknown, status: 302 | 303) {
    const { params } = collectAuthorizationParams(source);
    let hintAudience: string[] = [];
    let hintSid: unknown;
    if (params.id_token_hint !== undefined) {
      try {
        // §2: "the OP MUST validate that it was the issuer of the ID Token"; an expired hint is
        // still a valid hint (the RP usually logs out long after the ID token expired).
        const claims = await options.verifier.verify(params.id_token_hint, {
          typ: 'JWT',
          ignoreExpiration: true,
        });
        hintAudience = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
        hintSid = claims.sid;
      } catch {
        return sendErrorPage(
          reply,
          400,
          {
            title: 'Sign-out request not valid',
            message: 'The application sent an invalid sign-out request.',
            code: 'invalid_request',
          },
          pageContext,
        );
      }
    }
    // §2: when both are present, client_id must be the hint's audience.
    if (
      params.client_id !== undefined &&
      hintAudience.length > 0 &&
      !hintAudience.includes(params.client_id)
    ) {
      return sendErrorPage(
        reply,
        400,
        {
          title: 'Sign-out request not valid',
          message: 'The application sent an invalid sign-out request.',
          code: 'invalid_request',
        },
        pageContext,
      );
    }
    const clientId = params.client_id ?? (hintAudience.length === 1 ? hintAudience[0] : undefined);
    const client = clientId === undefined ? null : await stores.clients.findClient(clientId);
    const requestedRedirect = params.post_logout_redirect_uri;
    // §3: the URI "MUST exactly match one of the previously registered post_logout_redirect_uris".
    const redirectUri =
      requestedRedirect !== undefined && client?.postLogoutRedirectUris.includes(requestedRedirect)
        ? requestedRedirect
        : null;

    // §2: the OP MUST ask the user when there is no id_token_hint, or when the hint is not of the
    // current session; the confirmation posts back here with a CSRF token bound to this browser and
    // this session, so neither a link nor a cross-site form can sign anyone out.
    const session = await app.ssoSessions.current(request);
    if (session !== null && hintSid !== session.id) {
      const browserKey = app.ssoSessions.browserKey(request);
      const confirmed =
        request.method === 'POST' &&
        params.confirm === 'yes' &&
        browserKey !== null &&
        isValidCsrfToken(params.csrf, browserKey, 'logout', session.id);
      if (!confirmed) {
        return sendLogoutConfirmPage(reply, {
          basePath: pageContext.basePath,
          clientName: client?.clientName ?? null,
          // The client the request named or its hint's audience; the POST carries no hint.
          clientId: client?.clientId,
          state: params.state,
          redirectUri,
          csrfToken: csrfTokenFor(app.ssoSessions.ensureBrowserKey(request, reply), 'logout', session.id),
        });
      }
    }

    const ended = await app.ssoSessions.end(request, reply);
    if (ended !== null) {
      audit(request.log, AUDIT_EVENTS.logout, {
        sub: ended.sub,
        sid: ended.id,
        ...(client ? { client_id: client.clientId } : {}),
      });
    }

    let continueUrl: string | null = null;
    if (redirectUri !== null) {
      const url = new URL(redirectUri);
      if (params.state !== undefined) url.searchParams.append('state', params.state);
      continueUrl = url.toString();
    }
    // OIDC Front-Channel Logout 1.0 §3: the clients' logout URIs load in iframes of the page the OP
    // renders; with a post-logout redirect that page continues to it once they have loaded.
    const frames = app.sessionLogout.frontChannelTargets(request).map((target) => target.uri);
    if (continueUrl !== null && frames.length === 0) {
      return reply.header('cache-control', 'no-store').redirect(continueUrl, status);
    }
    return sendSignedOutPage(reply, { frames, continueUrl, basePath: pageContext.basePath });
  }

  app.get('/logout', (request, reply) => logout(request, reply, request.query, 302));
  app.post('/logout', (request, reply) => logout(request, reply, request.body, 303));
};
