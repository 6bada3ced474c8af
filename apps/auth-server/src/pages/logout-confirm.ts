import type { FastifyReply } from 'fastify';
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
  const body = html`<p class="lead">${
    input.clientName === null
      ? 'Do you want to sign out?'
      : html`<strong>${input.clientName}</strong> asks you to sign out.`
  }</p>
<p class="muted">Signing out ends your session here and in the applications you signed in to with it. If you did not ask to sign out, close this page.</p>
<form method="post" action="${input.basePath}/logout" class="actions">
${hidden('client_id', input.clientId)}
${hidden('post_logout_redirect_uri', input.redirectUri ?? undefined)}
${hidden('state', input.state)}
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit" name="confirm" value="yes" class="primary">Sign out</button>
</form>`;
  return renderPage({ title: 'Sign out?', body, basePath: input.basePath });
}

export function sendLogoutConfirmPage(reply: FastifyReply, input: LogoutConfirmPageInput) {
  const formActionSources = input.redirectUri === null ? [] : [new URL(input.redirectUri).origin];
  return sendHtml(reply, 200, renderLogoutConfirmPage(input), { formActionSources });
}
