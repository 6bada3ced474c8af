import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { interactionPagePath, PAGES } from '../../endpoints.js';
import type { MessageKey } from '../../i18n/catalogues/en.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import type { SsoSession } from '../../interaction/sso-session-repository.js';
import { renderOtpPage } from '../../pages/otp.js';
import { renderRecoveryCodePage, renderRecoveryCodeUsedPage } from '../../pages/recovery.js';
import { sendHtml } from '../../pages/respond.js';
import { type InteractionRoutesOptions, type LoginAttempt, tooManyAttemptsMessage } from './options.js';
import { type InteractionSteps, type LoadedInteraction, stringField } from './steps.js';

type SecondFactorPage = (
  reply: FastifyReply,
  loaded: LoadedInteraction,
  status: number,
  errorMessage?: string,
  /** The passkey page, offered when the user has a passkey. */
  passkeyUrl?: string,
) => FastifyReply;

/** How one kind of second factor checks what the user typed (an app's code, a recovery code). */
interface SecondFactorCheck {
  method: 'otp' | 'recovery_code';
  field: string;
  page: SecondFactorPage;
  invalidMessage: MessageKey;
  /** Accepts the value for `sub`, and says what the audit event of a success adds. */
  verify(
    sub: string,
    value: string,
  ): Promise<{ accepted: false; reason: string } | { accepted: true; detail: object }>;
  /** Instead of going on at once: a page to show first (the recovery codes left). */
  accepted?(reply: FastifyReply, loaded: LoadedInteraction, sub: string): Promise<FastifyReply>;
}

/**
 * The second step after the password (README "Multi-factor"): the authenticator-app code page and
 * the recovery-code page. Both share the login lockout under a per-user key, audit every attempt,
 * and add their method to the SSO session, from which `amr`/`acr` follow.
 */
export function registerSecondFactorRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): void {
  const { pageContext } = options;

  const sendOtpPage: SecondFactorPage = (reply, loaded, status, errorMessage, passkeyUrl) => {
    const page = renderOtpPage({
      clientName: loaded.purpose.client.clientName,
      csrfToken: csrfTokenFor(loaded.browserKey, 'otp', loaded.interaction.id),
      errorMessage,
      basePath: pageContext.basePath,
      recoveryUrl: steps.pageUrl(loaded.interaction, 'recovery'),
      passkeyUrl,
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  };

  const sendRecoveryPage: SecondFactorPage = (reply, loaded, status, errorMessage) => {
    const page = renderRecoveryCodePage({
      clientName: loaded.purpose.client.clientName,
      csrfToken: csrfTokenFor(loaded.browserKey, 'otp', loaded.interaction.id),
      errorMessage,
      basePath: pageContext.basePath,
      otpUrl: steps.pageUrl(loaded.interaction, 'otp'),
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  };

  const otpCheck: SecondFactorCheck = {
    method: 'otp',
    field: 'otp',
    page: sendOtpPage,
    invalidMessage: 'otp.invalidCode',
    async verify(sub, value) {
      const verification = await options.totp.verify(sub, value);
      return verification.outcome === 'accepted'
        ? { accepted: true, detail: { credential_id: verification.credentialId } }
        : { accepted: false, reason: verification.outcome };
    },
  };

  const recoveryCheck: SecondFactorCheck = {
    method: 'recovery_code',
    field: 'recovery_code',
    page: sendRecoveryPage,
    invalidMessage: 'recovery.invalidCode',
    async verify(sub, value) {
      if (!(await options.recoveryCodes.use(sub, value))) return { accepted: false, reason: 'invalid' };
      return { accepted: true, detail: { remaining: await options.recoveryCodes.remaining(sub) } };
    },
    // A used code is gone: say so and how many are left, then go on (the otp page's GET finds the
    // step done and finishes the interaction).
    async accepted(reply, loaded, sub) {
      const page = renderRecoveryCodeUsedPage({
        remaining: await options.recoveryCodes.remaining(sub),
        continueUrl: steps.pageUrl(loaded.interaction, 'otp'),
        accountUrl: `${pageContext.basePath}${PAGES.account.path}`,
        basePath: pageContext.basePath,
        language: pageLanguageOf(reply.request),
      });
      return sendHtml(reply, 200, page, { formActionSources: loaded.purpose.formActionSources });
    },
  };

  /** One submitted code: lockout first, then the check, audited either way. */
  async function submit(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    session: SsoSession,
    check: SecondFactorCheck,
    passkeyUrl: string | undefined,
  ) {
    const clientId = loaded.purpose.client.clientId;
    const decision = await steps.secondFactorAllowed(request, session.sub, clientId);
    if (!decision.allowed) {
      // RFC 6585 §4, as for passwords: 429 with Retry-After and the same words.
      reply.header('retry-after', String(decision.retryAfterSeconds));
      return check.page(
        reply,
        loaded,
        429,
        tooManyAttemptsMessage(decision.retryAfterSeconds, request.language),
        passkeyUrl,
      );
    }
    const attempt: LoginAttempt = { ip: request.ip, username: `mfa:${session.sub}` };
    const result = await check.verify(session.sub, stringField(request.body, check.field) ?? '');
    const context = { sub: session.sub, method: check.method, client_id: clientId, ip: request.ip };
    if (!result.accepted) {
      await options.loginAttemptGuard?.recordFailure(attempt);
      audit(request.log, AUDIT_EVENTS.factorFailed, { ...context, reason: result.reason });
      return check.page(reply, loaded, 401, request.language.text(check.invalidMessage), passkeyUrl);
    }
    await options.loginAttemptGuard?.recordSuccess(attempt);
    audit(request.log, AUDIT_EVENTS.factorSucceeded, { ...context, ...result.detail });
    if (check.method === 'recovery_code')
      app.securityNotices?.notify(request, session.sub, 'recovery_code_used');
    const stepped = await app.ssoSessions.addMethod(reply, session, { method: check.method });
    if (check.accepted) return check.accepted(reply, loaded, session.sub);
    return steps.proceed(reply, loaded, stepped, steps.progressOf(loaded.interaction));
  }

  /**
   * The passkey page when the user has a passkey. `redirect` when the code page should not be
   * shown at all: only a passkey reaches the level (`passkeyOnly`), or the user has no app.
   */
  async function passkeyOffer(loaded: LoadedInteraction, sub: string, passkeyOnly: boolean) {
    if (!(await options.passkeys.hasAny(sub))) return { url: undefined, redirect: false };
    const redirect = passkeyOnly || !(await options.totp.hasConfirmed(sub));
    return { url: steps.pageUrl(loaded.interaction, 'passkey'), redirect };
  }

  for (const [page, check] of [
    ['otp', otpCheck],
    ['recovery', recoveryCheck],
  ] as const) {
    app.get<{ Params: { id: string } }>(
      interactionPagePath(page),
      { config: { interaction: {} } },
      async (request, reply) => {
        const loaded = steps.loaded(request);
        const current = await steps.sessionAtStep(reply, loaded, 'otp');
        if (current === null) return reply;
        const offer = await passkeyOffer(loaded, current.user.sub, current.passkeyOnly);
        // A recovery code stays usable without an app, but never below a passkeyOnly level.
        if (offer.redirect && (page === 'otp' || current.passkeyOnly))
          return steps.redirectToPage(reply, loaded, 'passkey');
        return check.page(reply, loaded, 200, undefined, offer.url);
      },
    );

    app.post<{ Params: { id: string } }>(
      interactionPagePath(page),
      { config: { interaction: { csrf: 'otp' } } },
      async (request, reply) => {
        const loaded = steps.loaded(request);
        const current = await steps.sessionAtStep(reply, loaded, 'otp');
        if (current === null) return reply;
        // A code cannot reach a level only a passkey reaches (oauth-core `nextLevelStep` passkeyOnly).
        if (current.passkeyOnly) return steps.redirectToPage(reply, loaded, 'passkey');
        const offer = await passkeyOffer(loaded, current.user.sub, false);
        return submit(request, reply, loaded, current.session, check, offer.url);
      },
    );
  }
}
