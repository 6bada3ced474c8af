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
}

/** The consent page of the contract: submit buttons `name="decision"` valued `approve` and `deny`. */
export function renderConsentPage(input: ConsentPageInput): string {
  const items = input.scopes.map(
    (scope) => html`<li><span>${describeScope(scope)}</span> <code>${scope}</code></li>`,
  );
  const host = input.clientHost
    ? html` <span class="muted">(from <strong data-client-host>${input.clientHost}</strong>)</span>`
    : null;
  const body = html`<p class="lead"><strong>${input.clientName}</strong>${host} would like to:</p>
<ul class="scopes">${items}</ul>
<p class="muted">Signed in as <strong>${input.userDisplayName}</strong>.</p>
${input.notice ? html`<p class="alert" role="note">${input.notice}</p>` : null}
<form method="post" class="actions">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="approve" class="primary">Allow</button>
</form>
<p class="muted">You can withdraw this access at any time on <a href="${input.basePath}/account">your account page</a>.</p>`;
  return renderPage({ title: `Allow ${input.clientName} access?`, body, basePath: input.basePath });
}
