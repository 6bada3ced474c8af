import type { FastifyReply } from 'fastify';
import { pageLanguageOf } from '../i18n/request-language.js';
import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { sendHtml } from './respond.js';

export interface LogoutConfirmPageInput {
  basePath: string;
  /** The application that asked, when the request named a known client. */
  clientName: string | null;
  /** Carried through the confirmation: the client (named, or the hint's audience) and `state`. */
  clientId: string | undefined;
  state: string | undefined;
  /** The verified post-logout redirect, if any; `form-action` must also allow it (the POST redirects there). */
  redirectUri: string | null;
  csrfToken: string;
  language?: PageLanguage;
}

/**
 * OIDC RP-Initiated Logout 1.0 §2: "the OP MUST ask the End-User this question if an id_token_hint
 * was not provided or if the supplied ID Token does not belong to the current OP session with the
 * RP". Without it, any page could sign a user out with a link to the end-session endpoint. The
 * form posts back to `/logout` with `confirm=yes` and a CSRF token bound to this browser and session.
 */
export function renderLogoutConfirmPage(input: LogoutConfirmPageInput): string {
  const hidden = (name: string, value: string | undefined) =>
    value === undefined ? null : html`<input type="hidden" name="${name}" value="${value}">`;
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${
    input.clientName === null
      ? t.text('logout.question')
      : t.html('logout.clientAsks', { client: input.clientName })
  }</p>
<p class="muted">${t.text('logout.explanation')}</p>
<form method="post" action="${input.basePath}/logout" class="actions">
${hidden('client_id', input.clientId)}
${hidden('post_logout_redirect_uri', input.redirectUri ?? undefined)}
${hidden('state', input.state)}
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit" name="confirm" value="yes" class="primary">${t.text('logout.submit')}</button>
</form>`;
  return renderPage({ title: t.text('logout.title'), body, basePath: input.basePath, language });
}

export function sendLogoutConfirmPage(reply: FastifyReply, input: LogoutConfirmPageInput) {
  const formActionSources = input.redirectUri === null ? [] : [new URL(input.redirectUri).origin];
  const language = reply.request.languageChoice ? pageLanguageOf(reply.request) : undefined;
  return sendHtml(reply, 200, renderLogoutConfirmPage({ language, ...input }), { formActionSources });
}
