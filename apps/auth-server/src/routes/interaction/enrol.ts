import type { FastifyInstance, FastifyReply } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { interactionPagePath } from '../../endpoints.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { qrCodeDataUrl } from '../../mfa/qr-code.js';
import { renderEnrolTotpPage } from '../../pages/enrol-totp.js';
import { html } from '../../pages/html.js';
import { renderRecoveryCodesShownPage } from '../../pages/recovery.js';
import { sendHtml } from '../../pages/respond.js';
import { type InteractionRoutesOptions, type LoginAttempt, tooManyAttemptsMessage } from './options.js';
import { type InteractionSteps, type LoadedInteraction, stringField } from './steps.js';

interface PendingEnrolment {
  id: string;
  secret: string;
  uri: string;
}

/** The first factor enrolled in a sign-in: its recovery codes, shown once, before going on. */
export function recoveryCodesSender(steps: InteractionSteps, options: InteractionRoutesOptions) {
  return async (reply: FastifyReply, loaded: LoadedInteraction, sub: string) => {
    const codes = await options.recoveryCodes.regenerate(sub);
    audit(reply.log, AUDIT_EVENTS.recoveryCodesIssued, { sub });
    const page = renderRecoveryCodesShownPage({
      codes,
      continueCsrfToken: csrfTokenFor(loaded.browserKey, 'enrol', loaded.interaction.id),
      continueAction: steps.pageUrl(loaded.interaction, 'continue'),
      basePath: options.pageContext.basePath,
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, 200, page, { formActionSources: loaded.purpose.formActionSources });
  };
}

/**
 * Enrolment inside a sign-in: a client or user that requires a second factor leads a user without
 * one here (README "Multi-factor"). The confirming code completes the second factor of this
 * sign-in; the first factor enrolled shows its recovery codes once, then `continue` goes on.
 */
export function registerEnrolRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): void {
  const { pageContext } = options;

  async function sendEnrolPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    enrolment: PendingEnrolment,
    errorMessage?: string,
    passkeyOnly = false,
  ) {
    const passkeyUrl = steps.pageUrl(loaded.interaction, 'enrol-passkey');
    const client = loaded.purpose.client.clientName;
    const t = reply.request.language;
    const page = renderEnrolTotpPage({
      // Only a passkey reaches the level asked for (`passkeyOnly`): it leads; an app still gives
      // the multi-factor level, which answers a voluntary acr request (OIDC Core §5.5.1.1).
      lead: t.text(passkeyOnly ? 'enrol.leadPasskey' : 'enrol.leadApp', { client }),
      alternative: html`<p><a href="${passkeyUrl}" data-enrol="passkey"${passkeyOnly ? html` class="button primary"` : null}>${t.text(passkeyOnly ? 'enrol.setUpPasskey' : 'enrol.setUpPasskeyInstead')}</a></p>`,
      csrfToken: csrfTokenFor(loaded.browserKey, 'enrol', loaded.interaction.id),
      secret: enrolment.secret,
      qrCodeDataUrl: await qrCodeDataUrl(enrolment.uri),
      enrolmentId: enrolment.id,
      errorMessage,
      basePath: pageContext.basePath,
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  const sendRecoveryCodesOnce = recoveryCodesSender(steps, options);

  app.get<{ Params: { id: string } }>(
    interactionPagePath('enrol'),
    { config: { interaction: {} } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const current = await steps.sessionAtStep(reply, loaded, 'enrol');
      if (current === null) return reply;
      const { sub, username } = current.user;
      const enrolment = await options.totp.startEnrolment(sub, username, 'Authenticator app');
      return sendEnrolPage(reply, loaded, 200, enrolment, undefined, current.passkeyOnly);
    },
  );

  app.post<{ Params: { id: string } }>(
    interactionPagePath('enrol'),
    { config: { interaction: { csrf: 'enrol' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const current = await steps.sessionAtStep(reply, loaded, 'enrol');
      if (current === null) return reply;
      const { session, user } = current;
      const enrolmentId = stringField(request.body, 'enrolment') ?? '';
      const enrolment = await options.totp.pendingEnrolment(enrolmentId, user.sub, user.username);
      if (enrolment === null) return steps.redirectToPage(reply, loaded, 'enrol');
      const clientId = loaded.purpose.client.clientId;
      const decision = await steps.secondFactorAllowed(request, user.sub, clientId);
      if (!decision.allowed) {
        reply.header('retry-after', String(decision.retryAfterSeconds));
        return sendEnrolPage(
          reply,
          loaded,
          429,
          enrolment,
          tooManyAttemptsMessage(decision.retryAfterSeconds, request.language),
        );
      }
      const attempt: LoginAttempt = { ip: request.ip, username: `mfa:${user.sub}` };
      if (!(await options.totp.confirm(enrolment.id, user.sub, stringField(request.body, 'otp') ?? ''))) {
        await options.loginAttemptGuard?.recordFailure(attempt);
        return sendEnrolPage(reply, loaded, 400, enrolment, request.language.text('otp.invalidCode'));
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
        return steps.proceed(reply, loaded, stepped, steps.progressOf(loaded.interaction));
      }
      return sendRecoveryCodesOnce(reply, loaded, user.sub);
    },
  );

  /** After the recovery codes were shown: on with the interaction. */
  app.post<{ Params: { id: string } }>(
    interactionPagePath('continue'),
    { config: { interaction: { csrf: 'enrol' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const session = await loaded.session();
      return steps.proceed(reply, loaded, session, steps.progressOf(loaded.interaction));
    },
  );
}
