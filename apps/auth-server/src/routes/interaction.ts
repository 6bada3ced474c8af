import {
  type AuthenticationMethod,
  type AuthorizationRequest,
  type Client,
  dummyPasswordVerify,
  type OAuthError,
  type ProtocolStores,
  type TokenVerifier,
  type User,
  validateLogoutRequest,
  verifyPassword,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_CLIENT, isAccountInteraction } from '../account/account-interaction.js';
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
import { qrCodeDataUrl } from '../mfa/qr-code.js';
import type { RecoveryCodeRepository } from '../mfa/recovery-codes.js';
import type { TotpRepository } from '../mfa/totp-repository.js';
import { renderConsentPage } from '../pages/consent.js';
import { renderEnrolTotpPage } from '../pages/enrol-totp.js';
import { renderLoginPage } from '../pages/login.js';
import { sendLogoutConfirmPage } from '../pages/logout-confirm.js';
import { renderOtpPage } from '../pages/otp.js';
import { renderRecoveryCodePage, renderRecoveryCodesShownPage } from '../pages/recovery.js';
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
import { clientHomeLink, clientIdFromQuery, interactionPageUrl } from './interaction-url.js';
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
  allow(attempt: LoginAttempt): Promise<LoginAttemptDecision>;
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
  /** Authenticator apps: the otp and enrol pages. */
  totp: TotpRepository;
  /** Recovery codes: the recovery page, and the set shown after the first enrolment. */
  recoveryCodes: RecoveryCodeRepository;
}

/**
 * The first-factor sign-in methods of the login step (oauth-core `AUTHENTICATION_METHODS` says
 * what each contributes to `amr` and `acr`; README "Kerberos").
 */
export type SignInMethod = Extract<AuthenticationMethod, 'password' | 'kerberos'>;

/** The Kerberos route's own dependencies; the interaction steps are lent by these routes. */
export type KerberosSignIn = Omit<KerberosSignInOptions<unknown>, 'steps' | 'pageContext'>;

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

/** The pages of an interaction, named as in their URL `/interaction/:id/<page>`. */
export type InteractionPage = 'login' | 'kerberos' | 'otp' | 'recovery' | 'enrol' | 'continue' | 'consent';

/** Same text for a wrong code and a used one: the page does not help guessing. */
export const INVALID_CODE_MESSAGE = 'That code is not valid. Enter the current code from your app.';

/** Login, consent and logout pages (README "Pages"). */
export const interactionRoutes: FastifyPluginAsync<InteractionRoutesOptions> = async (app, options) => {
  const { flow, stores, interactions, consents, pageContext } = options;
  // Login and consent carry client_id, so an expired interaction's page can lead back to the client.
  const pageUrl = (interaction: Interaction, page: InteractionPage) =>
    interactionPageUrl(
      pageContext,
      interaction.id,
      page,
      page === 'login' || page === 'consent' ? interaction.request.params.client_id : undefined,
    );

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
      // Typically Back after signing in: the interaction is consumed. Offer the way on, the
      // client's own start page, which begins a fresh sign-in (or finds the user signed in).
      const next = await clientHomeLink(stores, clientIdFromQuery(request.query));
      sendErrorPage(
        reply,
        400,
        {
          title: 'This sign-in request has expired',
          message: next
            ? 'The sign-in took too long or was already completed. Start again from the application.'
            : 'The sign-in took too long or was already completed.',
          code: 'interaction_expired',
          ...(next ? { next } : {}),
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
    if (isAccountInteraction(interaction.request.params)) {
      return { interaction, browserKey, purpose: accountPurpose(interaction) };
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

  /** The account page's sign-in: it ends back on /account (max_age=0 when re-authenticating). */
  function accountPurpose(interaction: Interaction): InteractionPurpose {
    const backToAccount = (reply: FastifyReply) =>
      reply.header('cache-control', 'no-store').redirect(`${pageContext.basePath}/account`, 303);
    const maxAge = interaction.request.params.max_age;
    return {
      client: ACCOUNT_CLIENT,
      requirements: {
        client: ACCOUNT_CLIENT,
        scopes: ['openid'],
        prompt: [],
        maxAge: maxAge === undefined ? null : Number(maxAge),
      },
      loginHint: undefined,
      formActionSources: [],
      complete: async (reply) => backToAccount(reply),
      deny: async (reply) => backToAccount(reply),
      fail: async (reply) => backToAccount(reply),
    };
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
      kerberosHref: options.kerberos ? pageUrl(loaded.interaction, 'kerberos') : undefined,
      // The Kerberos challenge's body is this form too: it must post to the login URL.
      formAction: options.kerberos ? pageUrl(loaded.interaction, 'login') : undefined,
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  const redirectToPage = (reply: FastifyReply, loaded: LoadedInteraction, page: InteractionPage) =>
    reply.header('cache-control', 'no-store').redirect(pageUrl(loaded.interaction, page), 303);

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
      case 'otp':
      case 'enrol':
      case 'consent':
        return reply
          .header('cache-control', 'no-store')
          .redirect(pageUrl(loaded.interaction, step.kind), 303);
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
      const decision = await options.loginAttemptGuard.allow(attempt);
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
    // The session records the method; amr, acr and auth_time follow from it (authentication-level.ts).
    const session = await app.ssoSessions.start(request, reply, user.sub, { method });
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

  // ─── Second factor: authenticator app code, and enrolment when one is required ───────────────

  /**
   * The session this page may act on: the step must still be `expected` (otherwise the browser is
   * sent to the step it is at). Returns `null` after answering.
   */
  async function sessionAtStep(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    expected: 'otp' | 'enrol',
  ): Promise<{ session: SsoSession; user: User } | null> {
    const session = await app.ssoSessions.current(request);
    const step = await flow.nextStep(loaded.purpose.requirements, session, progressOf(loaded.interaction));
    if (step.kind === expected && session !== null) return { session, user: step.user };
    if (step.kind === 'complete' || step.kind === 'error') {
      await proceed(reply, loaded, session, progressOf(loaded.interaction));
    } else {
      await redirectToPage(reply, loaded, step.kind);
    }
    return null;
  }

  /** The login lockout, applied to second-factor codes under a key of their own per user. */
  async function secondFactorAllowed(request: FastifyRequest, sub: string, clientId: string) {
    if (!options.loginAttemptGuard) return { allowed: true } as const;
    const decision = await options.loginAttemptGuard.allow({ ip: request.ip, username: `mfa:${sub}` });
    if (!decision.allowed) {
      audit(request.log, AUDIT_EVENTS.rateLimitExceeded, {
        limit: decision.limit === 'username' ? 'mfa_user' : 'mfa_ip',
        sub,
        ip: request.ip,
        client_id: clientId,
        retry_after_seconds: decision.retryAfterSeconds,
      });
    }
    return decision;
  }

  function sendOtpPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    errorMessage?: string,
  ) {
    const page = renderOtpPage({
      clientName: loaded.purpose.client.clientName,
      csrfToken: csrfTokenFor(loaded.browserKey, 'otp', loaded.interaction.id),
      errorMessage,
      basePath: pageContext.basePath,
      recoveryUrl: pageUrl(loaded.interaction, 'recovery'),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  app.get<{ Params: { id: string } }>('/interaction/:id/otp', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null) return reply;
    if ((await sessionAtStep(request, reply, loaded, 'otp')) === null) return reply;
    return sendOtpPage(reply, loaded, 200);
  });

  app.post<{ Params: { id: string } }>('/interaction/:id/otp', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null || !checkCsrf(request, reply, loaded, 'otp')) return reply;
    const current = await sessionAtStep(request, reply, loaded, 'otp');
    if (current === null) return reply;
    const { session } = current;
    const clientId = loaded.purpose.client.clientId;
    const decision = await secondFactorAllowed(request, session.sub, clientId);
    if (!decision.allowed) {
      // RFC 6585 §4, as for passwords: 429 with Retry-After and the same words.
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return sendOtpPage(reply, loaded, 429, tooManyAttemptsMessage(decision.retryAfterSeconds));
    }
    const attempt: LoginAttempt = { ip: request.ip, username: `mfa:${session.sub}` };
    const verification = await options.totp.verify(session.sub, stringField(request.body, 'otp') ?? '');
    if (verification.outcome !== 'accepted') {
      await options.loginAttemptGuard?.recordFailure(attempt);
      audit(request.log, AUDIT_EVENTS.factorFailed, {
        sub: session.sub,
        method: 'otp',
        reason: verification.outcome,
        client_id: clientId,
        ip: request.ip,
      });
      return sendOtpPage(reply, loaded, 401, INVALID_CODE_MESSAGE);
    }
    await options.loginAttemptGuard?.recordSuccess(attempt);
    audit(request.log, AUDIT_EVENTS.factorSucceeded, {
      sub: session.sub,
      method: 'otp',
      credential_id: verification.credentialId,
      client_id: clientId,
      ip: request.ip,
    });
    const stepped = await app.ssoSessions.addMethod(reply, session, { method: 'otp' });
    return proceed(reply, loaded, stepped, progressOf(loaded.interaction));
  });

  function sendRecoveryPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    errorMessage?: string,
  ) {
    const page = renderRecoveryCodePage({
      clientName: loaded.purpose.client.clientName,
      csrfToken: csrfTokenFor(loaded.browserKey, 'otp', loaded.interaction.id),
      errorMessage,
      basePath: pageContext.basePath,
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  app.get<{ Params: { id: string } }>('/interaction/:id/recovery', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null) return reply;
    if ((await sessionAtStep(request, reply, loaded, 'otp')) === null) return reply;
    return sendRecoveryPage(reply, loaded, 200);
  });

  app.post<{ Params: { id: string } }>('/interaction/:id/recovery', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null || !checkCsrf(request, reply, loaded, 'otp')) return reply;
    const current = await sessionAtStep(request, reply, loaded, 'otp');
    if (current === null) return reply;
    const { session } = current;
    const clientId = loaded.purpose.client.clientId;
    const decision = await secondFactorAllowed(request, session.sub, clientId);
    if (!decision.allowed) {
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return sendRecoveryPage(reply, loaded, 429, tooManyAttemptsMessage(decision.retryAfterSeconds));
    }
    const attempt: LoginAttempt = { ip: request.ip, username: `mfa:${session.sub}` };
    if (!(await options.recoveryCodes.use(session.sub, stringField(request.body, 'recovery_code') ?? ''))) {
      await options.loginAttemptGuard?.recordFailure(attempt);
      audit(request.log, AUDIT_EVENTS.factorFailed, {
        sub: session.sub,
        method: 'recovery_code',
        reason: 'invalid',
        client_id: clientId,
        ip: request.ip,
      });
      return sendRecoveryPage(reply, loaded, 401, 'That recovery code is not valid or was already used.');
    }
    await options.loginAttemptGuard?.recordSuccess(attempt);
    audit(request.log, AUDIT_EVENTS.factorSucceeded, {
      sub: session.sub,
      method: 'recovery_code',
      remaining: await options.recoveryCodes.remaining(session.sub),
      client_id: clientId,
      ip: request.ip,
    });
    const stepped = await app.ssoSessions.addMethod(reply, session, { method: 'recovery_code' });
    return proceed(reply, loaded, stepped, progressOf(loaded.interaction));
  });

  /** After the recovery codes were shown: on with the interaction. */
  app.post<{ Params: { id: string } }>('/interaction/:id/continue', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null || !checkCsrf(request, reply, loaded, 'enrol')) return reply;
    const session = await app.ssoSessions.current(request);
    return proceed(reply, loaded, session, progressOf(loaded.interaction));
  });

  async function sendEnrolPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    enrolment: { id: string; secret: string; uri: string },
    errorMessage?: string,
  ) {
    const page = renderEnrolTotpPage({
      lead: `${loaded.purpose.client.clientName} requires a second step when you sign in. Set up an authenticator app to continue.`,
      csrfToken: csrfTokenFor(loaded.browserKey, 'enrol', loaded.interaction.id),
      secret: enrolment.secret,
      qrCodeDataUrl: await qrCodeDataUrl(enrolment.uri),
      enrolmentId: enrolment.id,
      errorMessage,
      basePath: pageContext.basePath,
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  app.get<{ Params: { id: string } }>('/interaction/:id/enrol', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null) return reply;
    const current = await sessionAtStep(request, reply, loaded, 'enrol');
    if (current === null) return reply;
    const enrolment = await options.totp.startEnrolment(
      current.user.sub,
      current.user.username,
      'Authenticator app',
    );
    return sendEnrolPage(reply, loaded, 200, enrolment);
  });

  app.post<{ Params: { id: string } }>('/interaction/:id/enrol', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null || !checkCsrf(request, reply, loaded, 'enrol')) return reply;
    const current = await sessionAtStep(request, reply, loaded, 'enrol');
    if (current === null) return reply;
    const { session, user } = current;
    const enrolment = await options.totp.pendingEnrolment(
      stringField(request.body, 'enrolment') ?? '',
      user.sub,
      user.username,
    );
    if (enrolment === null) return redirectToPage(reply, loaded, 'enrol');
    const clientId = loaded.purpose.client.clientId;
    const decision = await secondFactorAllowed(request, user.sub, clientId);
    if (!decision.allowed) {
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return sendEnrolPage(reply, loaded, 429, enrolment, tooManyAttemptsMessage(decision.retryAfterSeconds));
    }
    const attempt: LoginAttempt = { ip: request.ip, username: `mfa:${user.sub}` };
    if (!(await options.totp.confirm(enrolment.id, user.sub, stringField(request.body, 'otp') ?? ''))) {
      await options.loginAttemptGuard?.recordFailure(attempt);
      return sendEnrolPage(reply, loaded, 400, enrolment, INVALID_CODE_MESSAGE);
    }
    await options.loginAttemptGuard?.recordSuccess(attempt);
    audit(request.log, AUDIT_EVENTS.factorEnrolled, {
      sub: user.sub,
      method: 'otp',
      credential_id: enrolment.id,
      client_id: clientId,
    });
    // The confirming code proved possession: it completes the second factor of this sign-in.
    const stepped = await app.ssoSessions.addMethod(reply, session, { method: 'otp' });
    if (await options.recoveryCodes.hasSet(user.sub)) {
      return proceed(reply, loaded, stepped, progressOf(loaded.interaction));
    }
    // The first factor enrolled: its recovery codes, shown once, before going on.
    const codes = await options.recoveryCodes.regenerate(user.sub);
    audit(request.log, AUDIT_EVENTS.recoveryCodesIssued, { sub: user.sub });
    const page = renderRecoveryCodesShownPage({
      codes,
      continueCsrfToken: csrfTokenFor(loaded.browserKey, 'enrol', loaded.interaction.id),
      continueAction: pageUrl(loaded.interaction, 'continue'),
      basePath: pageContext.basePath,
    });
    return sendHtml(reply, 200, page, { formActionSources: loaded.purpose.formActionSources });
  });

  // ─── Consent ───────────────────────────────────────────────────────────────────────────────────

  app.get<{ Params: { id: string } }>('/interaction/:id/consent', async (request, reply) => {
    const loaded = await loadInteraction(request, reply);
    if (loaded === null) return reply;
    const session = await app.ssoSessions.current(request);
    const step = await flow.nextStep(loaded.purpose.requirements, session, progressOf(loaded.interaction));
    if (step.kind !== 'consent' && step.kind !== 'complete') {
      return redirectToPage(reply, loaded, step.kind === 'error' ? 'login' : step.kind);
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
    if (step.kind !== 'consent' && step.kind !== 'complete') {
      // The session ended (or changed) while the consent page was open: sign in first.
      return redirectToPage(reply, loaded, step.kind === 'error' ? 'login' : step.kind);
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
    const decision = await validateLogoutRequest(params, {
      verifier: options.verifier,
      clients: stores.clients,
    });
    if (!decision.valid) {
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
    const { client, hintSid, redirectUri, continueUrl } = decision;

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
