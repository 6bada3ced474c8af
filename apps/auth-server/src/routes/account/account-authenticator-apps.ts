import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { qrCodeDataUrl } from '../../mfa/qr-code.js';
import type { TotpRepository } from '../../mfa/totp-repository.js';
import { renderEnrolTotpPage } from '../../pages/enrol-totp.js';
import { sendHtml } from '../../pages/respond.js';
import { INVALID_CODE_MESSAGE } from '../interaction/index.js';
import {
  type AccountHolder,
  type AccountPageHelpers,
  type AccountPageNotice,
  formField,
} from './account-area.js';

export interface AccountAuthenticatorAppDeps extends AccountPageHelpers {
  totp: TotpRepository;
  /** A factor was just proven: record it in the session, then the recovery codes or the account page. */
  factorEnrolled(
    request: FastifyRequest,
    reply: FastifyReply,
    current: AccountHolder,
    method: { method: 'otp' },
    notice: AccountPageNotice,
  ): Promise<unknown>;
}

/**
 * The account page's authenticator apps (RFC 6238 TOTP): add (a QR code, then a code from the app
 * confirms it), rename, remove. Adding and removing change how the account is entered, so they
 * need a recent authentication; renaming does not.
 */
export function registerAccountAuthenticatorAppRoutes(
  app: FastifyInstance,
  deps: AccountAuthenticatorAppDeps,
) {
  const { totp, accountUrl, accountHolder, sendAccountPage } = deps;

  async function sendEnrolment(
    reply: FastifyReply,
    current: AccountHolder,
    enrolment: { id: string; secret: string; uri: string },
    status = 200,
    errorMessage?: string,
  ) {
    const page = renderEnrolTotpPage({
      csrfToken: csrfTokenFor(current.browserKey, 'account', current.session.id),
      secret: enrolment.secret,
      qrCodeDataUrl: await qrCodeDataUrl(enrolment.uri),
      enrolmentId: enrolment.id,
      errorMessage,
      basePath: deps.basePath,
      action: `${accountUrl}/totp/confirm`,
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page);
  }

  app.post('/account/totp', { config: { account: 'recent-change' } }, async (request, reply) => {
    const current = accountHolder(request);
    const enrolment = await totp.startEnrolment(current.user.sub, current.user.username, 'Authenticator app');
    return sendEnrolment(reply, current, enrolment);
  });

  app.post('/account/totp/confirm', { config: { account: 'recent-change' } }, async (request, reply) => {
    const current = accountHolder(request);
    const { user } = current;
    const enrolment = await totp.pendingEnrolment(
      formField(request.body, 'enrolment'),
      user.sub,
      user.username,
    );
    if (enrolment === null) return reply.header('cache-control', 'no-store').redirect(accountUrl, 303);
    if (!(await totp.confirm(enrolment.id, user.sub, formField(request.body, 'otp')))) {
      return sendEnrolment(reply, current, enrolment, 400, INVALID_CODE_MESSAGE);
    }
    audit(request.log, AUDIT_EVENTS.factorEnrolled, {
      sub: user.sub,
      method: 'otp',
      credential_id: enrolment.id,
    });
    // The confirming code proved possession: the session now holds the level the new factor demands
    // (a user with a factor is always asked for it), and keeps working.
    return deps.factorEnrolled(
      request,
      reply,
      current,
      { method: 'otp' },
      { kind: 'ok', text: request.language.text('accountNotice.appAdded') },
    );
  });

  app.post<{ Params: { id: string } }>(
    '/account/totp/:id/rename',
    { config: { account: 'change' } },
    async (request, reply) => {
      const current = accountHolder(request);
      const name = formField(request.body, 'name').trim().slice(0, 60);
      if (name === '' || !(await totp.rename(request.params.id, current.user.sub, name))) {
        return sendAccountPage(reply, current, 400, {
          kind: 'error',
          text: request.language.text('accountNotice.appNotRenamed'),
        });
      }
      audit(request.log, AUDIT_EVENTS.factorRenamed, {
        sub: current.user.sub,
        method: 'otp',
        credential_id: request.params.id,
      });
      return sendAccountPage(reply, current, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.renamed'),
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/account/totp/:id/remove',
    { config: { account: 'recent-change' } },
    async (request, reply) => {
      const current = accountHolder(request);
      if (!(await totp.remove(request.params.id, current.user.sub))) {
        return sendAccountPage(reply, current, 404, {
          kind: 'error',
          text: request.language.text('accountNotice.appNotFound'),
        });
      }
      audit(request.log, AUDIT_EVENTS.factorRemoved, {
        sub: current.user.sub,
        method: 'otp',
        credential_id: request.params.id,
      });
      app.securityNotices?.notify(request, current.user.sub, 'factor_removed');
      return sendAccountPage(reply, current, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.appRemoved'),
      });
    },
  );
}
