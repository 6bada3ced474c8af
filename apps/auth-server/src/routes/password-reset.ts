import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { PAGES } from '../endpoints.js';
import { pageLanguageOf } from '../i18n/request-language.js';
import { csrfTokenFor, isValidCsrfToken } from '../interaction/csrf.js';
import { type PasswordRecovery, RESET_LINK_TTL_SECONDS } from '../mail/password-reset.js';
import { changeContextOf } from '../mail/security-notices.js';
import { renderErrorPage } from '../pages/error.js';
import {
  renderForgotPasswordPage,
  renderForgotPasswordSentPage,
  renderPasswordResetDonePage,
  renderResetLinkInvalidPage,
  renderResetPasswordPage,
} from '../pages/password-reset.js';
import { sendHtml } from '../pages/respond.js';
import type { PageContext } from './authorization-reply.js';

export interface PasswordResetRoutesOptions {
  recovery: PasswordRecovery;
  pageContext: PageContext;
}

/** The CSRF token of the forgot-password form is bound to the browser cookie and this form. */
const FORGOT_FORM = 'forgot-password';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const field = (request: FastifyRequest, name: string) =>
  text((request.body as Record<string, unknown> | undefined)?.[name]);

/**
 * Self-service password reset (README "Email"): GET/POST /forgot-password (the address) and
 * GET/POST /reset-password (the mailed link). GET never changes anything: mail scanners open links.
 */
export const passwordResetRoutes: FastifyPluginAsync<PasswordResetRoutesOptions> = async (app, options) => {
  const { recovery } = options;
  const { basePath } = options.pageContext;

  function forgotPage(request: FastifyRequest, reply: FastifyReply, status: number, errorMessage?: string) {
    const browserKey = app.ssoSessions.ensureBrowserKey(request, reply);
    const csrfToken = csrfTokenFor(browserKey, 'recovery', FORGOT_FORM);
    const language = pageLanguageOf(request);
    return sendHtml(reply, status, renderForgotPasswordPage({ csrfToken, basePath, errorMessage, language }));
  }

  app.get(PAGES.forgotPassword.path, async (request, reply) => forgotPage(request, reply, 200));

  app.post(PAGES.forgotPassword.path, async (request, reply) => {
    const browserKey = app.ssoSessions.browserKey(request);
    if (!browserKey || !isValidCsrfToken(field(request, 'csrf'), browserKey, 'recovery', FORGOT_FORM)) {
      return forgotPage(request, reply, 400, request.language.text('forgot.formExpired'));
    }
    const outcome = await recovery.request(field(request, 'email'), request.ip);
    if (outcome.kind === 'limited') {
      // RFC 6585 §4: 429 with Retry-After, the page saying the same in words.
      reply.header('retry-after', String(outcome.retryAfterSeconds));
      const t = request.language;
      const page = renderErrorPage({
        title: t.text('forgot.limitedTitle'),
        message: t.text('forgot.limited'),
        code: 'rate_limited',
        basePath,
        language: pageLanguageOf(request),
      });
      return sendHtml(reply, 429, page);
    }
    return sendHtml(
      reply,
      200,
      renderForgotPasswordSentPage({
        basePath,
        minutes: RESET_LINK_TTL_SECONDS / 60,
        language: pageLanguageOf(request),
      }),
    );
  });

  app.get(PAGES.resetPassword.path, async (request, reply) => {
    const token = text((request.query as Record<string, unknown>).token);
    if (!(await recovery.isUsable(token)))
      return sendHtml(
        reply,
        400,
        renderResetLinkInvalidPage({ basePath, language: pageLanguageOf(request) }),
      );
    return sendHtml(
      reply,
      200,
      renderResetPasswordPage({ token, basePath, language: pageLanguageOf(request) }),
    );
  });

  app.post(PAGES.resetPassword.path, async (request, reply) => {
    const token = field(request, 'token');
    const newPassword = field(request, 'new_password');
    const confirm = (request.body as Record<string, unknown> | undefined)?.confirm_password;
    if (confirm !== undefined && text(confirm) !== newPassword) {
      const errorMessage = request.language.text('reset.mismatch');
      const language = pageLanguageOf(request);
      return sendHtml(reply, 400, renderResetPasswordPage({ token, basePath, errorMessage, language }));
    }
    const outcome = await recovery.reset(token, newPassword, changeContextOf(request));
    switch (outcome.kind) {
      case 'invalid_link':
        return sendHtml(
          reply,
          400,
          renderResetLinkInvalidPage({ basePath, language: pageLanguageOf(request) }),
        );
      case 'refused':
        return sendHtml(
          reply,
          400,
          renderResetPasswordPage({
            token,
            basePath,
            errorMessage: outcome.problem,
            language: pageLanguageOf(request),
          }),
        );
      case 'changed':
        return sendHtml(
          reply,
          200,
          renderPasswordResetDonePage({ basePath, language: pageLanguageOf(request) }),
        );
    }
  });
};
