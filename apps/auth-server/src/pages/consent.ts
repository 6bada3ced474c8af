import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { describeScope } from './scope-descriptions.js';

export interface ConsentPageInput {
  clientName: string;
  /** The host of a metadata-document client's URL: the only part of its identity that is checked. */
  clientHost?: string | undefined;
  /** Who is signed in, so the user can tell whose account is being shared. */
  userDisplayName: string;
  scopes: readonly string[];
  csrfToken: string;
  basePath: string;
  /** Extra warning above the buttons (the device flow's anti-phishing notice, RFC 8628 §5.4). */
  notice?: string;
  language?: PageLanguage;
}

/** The consent page of the contract: submit buttons `name="decision"` valued `approve` and `deny`. */
export function renderConsentPage(input: ConsentPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const items = input.scopes.map(
    (scope) => html`<li><span>${describeScope(scope, t)}</span> <code>${scope}</code></li>`,
  );
  const fromHost = input.clientHost
    ? html` <span class="muted">${t.html('consent.fromHost', {
        host: html`<strong data-client-host>${input.clientHost}</strong>`,
      })}</span>`
    : '';
  const accountLink = html`<a href="${input.basePath}/account">${t.text('consent.accountPage')}</a>`;
  const body = html`<p class="lead">${t.html('consent.lead', { client: input.clientName, fromHost })}</p>
<ul class="scopes">${items}</ul>
<p class="muted">${t.html('consent.signedInAs', { user: input.userDisplayName })}</p>
${input.notice ? html`<p class="alert" role="note">${input.notice}</p>` : null}
<form method="post" class="actions">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit" name="decision" value="deny" class="secondary">${t.text('consent.deny')}</button>
<button type="submit" name="decision" value="approve" class="primary">${t.text('consent.allow')}</button>
</form>
<p class="muted">${t.html('consent.withdraw', { accountLink })}</p>`;
  return renderPage({
    title: t.text('consent.title', { client: input.clientName }),
    body,
    basePath: input.basePath,
    language,
  });
}
