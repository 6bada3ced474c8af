import type { CompletedMethod, User } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_CLIENT, isAccountInteraction } from '../../account/account-interaction.js';
import { CONSOLE_CLIENT, isConsoleInteraction } from '../../admin/console-interaction.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { PAGES } from '../../endpoints.js';
import type { Translator } from '../../i18n/translator.js';
import type { InteractionProgress, SignInSubjectReader } from '../../interaction/authorization-flow.js';
import { hashCookieValue } from '../../interaction/cookie-hash.js';
import { type CsrfPurpose, isValidCsrfToken } from '../../interaction/csrf.js';
import type { Interaction } from '../../interaction/interaction-repository.js';
import { annotateInteractionTrace } from '../../interaction/interaction-trace.js';
import type { SsoSession } from '../../interaction/sso-session-repository.js';
import { respondToValidationError, sendErrorPage, sendFormExpiredPage } from '../authorization-reply.js';
import type {
  CompleteStep,
  FirstFactorMethod,
  InteractionPage,
  InteractionPurpose,
  InteractionRoutesOptions,
  LoginAttemptDecision,
} from './options.js';
import { accountPurpose, authorizationPurpose, consolePurpose } from './purposes.js';
import { clientHomeLink, clientIdFromQuery, interactionPageUrl } from './url.js';

/** What a method adds to its record beyond its name (oauth-core `CompletedMethod`). */
export type MethodDetails = Omit<CompletedMethod, 'method' | 'at'>;

/** An interaction of this browser, loaded and re-validated, with what it is for. */
export interface LoadedInteraction {
  interaction: Interaction;
  browserKey: string;
  purpose: InteractionPurpose;
  /**
   * The request's SSO session, as `app.ssoSessions.current` gives it, read with the interaction:
   * for the step's decision before anything in this request starts, renews or ends a session.
   */
  session(): Promise<SsoSession | null>;
  /**
   * The sign-in subject as the guard read it with the session, when asked for that session's user
   * and the stored request's client; else read from the store. For a step's decision before the
   * request changes the account (a factor enrolled, a consent remembered): after that, `proceed`
   * reads it again.
   */
  signInSubject: SignInSubjectReader;
}

export type InteractionRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * What every page of an interaction does the same way: load it for this browser, check the form's
 * CSRF token, move on to the next step (oauth-core's decisions through `AuthorizationFlow`), and
 * finish it exactly once. The page files (login, second factor, enrolment, consent) build on these.
 */
export interface InteractionSteps {
  pageUrl(interaction: Interaction, page: InteractionPage): string;
  /** The interaction of the URL if live and started by this browser; else an error page and `null`. */
  load(request: InteractionRequest, reply: FastifyReply): Promise<LoadedInteraction | null>;
  /** The interaction the area's guard loaded for this request (src/routes/interaction/index.ts). */
  loaded(request: FastifyRequest): LoadedInteraction;
  /** True when the form's CSRF token is valid; else a 403 page was sent. */
  checkCsrf(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    purpose: CsrfPurpose,
  ): boolean;
  progressOf(interaction: Interaction): InteractionProgress;
  redirectToPage(reply: FastifyReply, loaded: LoadedInteraction, page: InteractionPage): FastifyReply;
  /** A second submission (double click, back button) after the interaction was consumed. */
  sendAlreadyCompleted(reply: FastifyReply): FastifyReply;
  /** Ends the interaction with a step already known to be `complete` (consume it, then answer). */
  complete(reply: FastifyReply, loaded: LoadedInteraction, step: CompleteStep): Promise<FastifyReply>;
  /** After a login or an approval: the next page, or the end of the interaction. */
  proceed(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    session: SsoSession | null,
    progress: InteractionProgress,
  ): Promise<FastifyReply>;
  /** A sign-in method succeeded for `user`: the SSO session starts (or renews), then `proceed`. */
  signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    user: User,
    method: FirstFactorMethod,
    /** A passkey's WebAuthn flags (UV, backup state), or a federated sign-in's upstream amr. */
    flags?: MethodDetails,
    /** Runs once the session exists, before the next step (a federated sign-in records its origin). */
    onSessionStarted?: (session: SsoSession) => Promise<void>,
  ): Promise<FastifyReply>;
  /**
   * The session a second-factor page may act on: the step must still be `expected` (else the
   * browser is sent to the step it is at and `null` returned).
   */
  sessionAtStep(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    expected: 'otp' | 'enrol',
  ): Promise<{ session: SsoSession; user: User; passkeyOnly: boolean } | null>;
  /** The login lockout, applied to second-factor codes under a key of their own per user. */
  secondFactorAllowed(request: FastifyRequest, sub: string, clientId: string): Promise<LoginAttemptDecision>;
}

export function createInteractionSteps(
  app: FastifyInstance,
  options: InteractionRoutesOptions,
): InteractionSteps {
  const { flow, interactions, pageContext } = options;

  // Every page carries client_id (the account page's own for its sign-in), so once the interaction
  // is gone (Back after signing in) the page can still lead on to that client.
  const pageUrl = (interaction: Interaction, page: InteractionPage) =>
    interactionPageUrl(
      pageContext,
      interaction.id,
      page,
      interaction.request.params.client_id ?? ownPageClientId(interaction.request.params),
    );

  const progressOf = (interaction: Interaction): InteractionProgress => ({
    loginSid: interaction.loginSid,
    approvedScopes: interaction.approvedScopes,
  });

  const redirectToPage = (reply: FastifyReply, loaded: LoadedInteraction, page: InteractionPage) =>
    reply.header('cache-control', 'no-store').redirect(pageUrl(loaded.interaction, page), 303);

  /** Where to go when an interaction is gone: the start page (its "Your account" link) by default. */
  const startPage = (t: Translator) => ({
    href: `${pageContext.basePath}/`,
    label: t.text('error.startPage'),
  });

  const sendAlreadyCompleted = (reply: FastifyReply) =>
    sendErrorPage(
      reply,
      400,
      {
        title: reply.request.language.text('error.alreadyCompleted.title'),
        message: reply.request.language.text('error.alreadyCompleted.message'),
        code: 'interaction_consumed',
        next: startPage(reply.request.language),
      },
      pageContext,
    );

  /** The way on from a page of `clientId`: its registered home, or the account page for its sign-in. */
  async function wayOnTo(clientId: string | undefined, t: Translator) {
    if (clientId === ACCOUNT_CLIENT.clientId) {
      return { href: `${pageContext.basePath}${PAGES.account.path}`, label: t.text('error.accountPage') };
    }
    if (clientId === CONSOLE_CLIENT.clientId) {
      return { href: `${pageContext.basePath}/admin`, label: 'Go to the operator console' };
    }
    return clientHomeLink(options.stores, clientId);
  }

  async function sendExpired(request: InteractionRequest, reply: FastifyReply) {
    const t = request.language;
    const next = await wayOnTo(clientIdFromQuery(request.query), t);
    // Typically Back after signing in: the interaction was consumed and this browser is signed in.
    // It finished, so the browser goes on to where it went (the client's home finds the session).
    if (next !== undefined && (await app.ssoSessions.current(request)) !== null) {
      return reply.header('cache-control', 'no-store').redirect(next.href, 303);
    }
    return sendErrorPage(
      reply,
      400,
      {
        title: t.text('error.expired.title'),
        message: t.text(next ? 'error.expired.message' : 'error.expired.messageNoApp'),
        code: 'interaction_expired',
        next: next ?? startPage(t),
      },
      pageContext,
    );
  }

  /** What the interaction is for; `null` after a page was sent when it can no longer go on. */
  async function purposeOf(
    interaction: Interaction,
    reply: FastifyReply,
  ): Promise<InteractionPurpose | null> {
    if (interaction.deviceCodeHash) {
      // Re-checked at every step: the code may have expired or been decided in another tab.
      const purpose = options.resolveDevicePurpose
        ? await options.resolveDevicePurpose(interaction.deviceCodeHash, reply)
        : null;
      if (purpose === null && !reply.sent) sendAlreadyCompleted(reply);
      return purpose;
    }
    if (isAccountInteraction(interaction.request.params)) return accountPurpose(pageContext, interaction);
    if (isConsoleInteraction(interaction.request.params)) return consolePurpose(pageContext, interaction);
    try {
      // Re-validated at every step: the client may have been changed or removed meanwhile.
      const authorizationRequest = await flow.revalidate(interaction.request);
      return authorizationPurpose(flow, pageContext, interaction, authorizationRequest);
    } catch (error) {
      await respondToValidationError(reply, error, pageContext, 303);
      return null;
    }
  }

  async function load(request: InteractionRequest, reply: FastifyReply): Promise<LoadedInteraction | null> {
    annotateInteractionTrace(request.params.id);
    const now = options.nowSeconds();
    const sessionKeyHash = app.ssoSessions.sessionKeyHash(request);
    const found = await interactions.findActiveWithSession(request.params.id, sessionKeyHash, now);
    if (found === null) {
      await sendExpired(request, reply);
      return null;
    }
    const { interaction } = found;
    const browserKey = app.ssoSessions.browserKey(request);
    if (browserKey === null || hashCookieValue(browserKey) !== interaction.browserHash) {
      // The interaction is bound to the browser that started it: a link copied to another
      // browser (or a victim lured into someone else's sign-in) cannot complete it.
      sendErrorPage(
        reply,
        403,
        {
          title: request.language.text('error.otherBrowser.title'),
          message: request.language.text('error.otherBrowser.message'),
          code: 'interaction_browser_mismatch',
          next:
            (await wayOnTo(clientIdFromQuery(request.query), request.language)) ??
            startPage(request.language),
        },
        pageContext,
      );
      return null;
    }
    const purpose = await purposeOf(interaction, reply);
    if (purpose === null) return null;
    let session: Promise<SsoSession | null> | undefined;
    const sessionOnce = () => {
      session ??= app.ssoSessions.currentFrom(found.session, now);
      return session;
    };
    const joined = found.joinedSubject;
    const signInSubject: SignInSubjectReader = async (sub, clientId) =>
      joined !== null && joined.sub === sub && joined.clientId === clientId
        ? joined.subject
        : flow.signInSubject(sub, clientId);
    return { interaction, browserKey, purpose, session: sessionOnce, signInSubject };
  }

  function checkCsrf(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    purpose: CsrfPurpose,
  ): boolean {
    const token = stringField(request.body, 'csrf');
    if (isValidCsrfToken(token, loaded.browserKey, purpose, loaded.interaction.id)) return true;
    sendFormExpiredPage(reply, pageContext);
    return false;
  }

  function loaded(request: FastifyRequest): LoadedInteraction {
    if (request.loadedInteraction === null) throw new Error('interaction route without its guard');
    return request.loadedInteraction;
  }

  /** Finishes the interaction: consume it (exactly once), then let its purpose answer. */
  async function complete(reply: FastifyReply, loaded: LoadedInteraction, step: CompleteStep) {
    const { id, browserHash } = loaded.interaction;
    const consumed = await interactions.consume(id, browserHash, options.nowSeconds());
    if (consumed === null) return sendAlreadyCompleted(reply);
    return loaded.purpose.complete(reply, step);
  }

  async function proceed(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    session: SsoSession | null,
    progress: InteractionProgress,
  ): Promise<FastifyReply> {
    const step = await flow.nextStep(loaded.purpose.requirements, session, progress);
    switch (step.kind) {
      case 'login':
      case 'otp':
      case 'enrol':
      case 'consent':
        return redirectToPage(reply, loaded, step.kind);
      case 'complete':
        return complete(reply, loaded, step);
      case 'error': {
        const { id, browserHash } = loaded.interaction;
        await interactions.consume(id, browserHash, options.nowSeconds());
        return loaded.purpose.fail(reply, step.error);
      }
    }
  }

  async function signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    user: User,
    method: FirstFactorMethod,
    flags?: MethodDetails,
    onSessionStarted?: (session: SsoSession) => Promise<void>,
  ) {
    // The session records the method; amr, acr and auth_time follow from it (authentication-level.ts).
    // The session is recorded as this interaction's login (prompt=login and max_age are then
    // satisfied) in the statement that writes it.
    const session = await app.ssoSessions.start(
      request,
      reply,
      user.sub,
      { method, ...flags },
      loaded.interaction.id,
    );
    await onSessionStarted?.(session);
    // Mails sent later without a page (a reset, a notice) speak the language of this sign-in. A
    // user read from the store says which one is recorded: unchanged, nothing is written.
    const language = request.language.language;
    if (user.locale !== language) await options.accounts.recordLanguage(user.sub, language);
    return proceed(reply, loaded, session, { ...progressOf(loaded.interaction), loginSid: session.id });
  }

  async function sessionAtStep(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    expected: 'otp' | 'enrol',
  ): Promise<{ session: SsoSession; user: User; passkeyOnly: boolean } | null> {
    const session = await loaded.session();
    const step = await flow.nextStep(
      loaded.purpose.requirements,
      session,
      progressOf(loaded.interaction),
      loaded.signInSubject,
    );
    if (step.kind === expected && session !== null) {
      return { session, user: step.user, passkeyOnly: step.passkeyOnly };
    }
    if (step.kind === 'complete' || step.kind === 'error') {
      await proceed(reply, loaded, session, progressOf(loaded.interaction));
    } else {
      await redirectToPage(reply, loaded, step.kind);
    }
    return null;
  }

  async function secondFactorAllowed(
    request: FastifyRequest,
    sub: string,
    clientId: string,
  ): Promise<LoginAttemptDecision> {
    if (!options.loginAttemptGuard) return { allowed: true };
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

  return {
    pageUrl,
    load,
    loaded,
    checkCsrf,
    progressOf,
    redirectToPage,
    sendAlreadyCompleted,
    complete,
    proceed,
    signedIn,
    sessionAtStep,
    secondFactorAllowed,
  };
}

/** The client id the pages of the server's own sign-ins (account page, console) carry. */
function ownPageClientId(params: Record<string, string>): string | undefined {
  if (isAccountInteraction(params)) return ACCOUNT_CLIENT.clientId;
  if (isConsoleInteraction(params)) return CONSOLE_CLIENT.clientId;
  return undefined;
}

/** A form field, when the body has it as a string. */
export function stringField(body: unknown, name: string): string | undefined {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}
