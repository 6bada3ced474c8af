import { html } from './html.js';
import { renderPage } from './layout.js';

export interface LinkAccountPageInput {
  providerName: string;
  email: string;
  csrfToken: string;
  linkToken: string;
  action: string;
  errorMessage?: string;
  basePath: string;
}

/**
 * Linking a first federated sign-in to the existing account with the same verified address: the
 * account's owner proves it with their password; nothing is linked without it.
 */
export function renderLinkAccountPage(input: LinkAccountPageInput): string {
  const body = html`<p class="lead">An account with the address <strong>${input.email}</strong> already exists here.</p>
<p>Enter its password to use ${input.providerName} to sign in to it from now on.</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="link-error">${input.errorMessage}</p>` : null}
<form method="post" action="${input.action}" class="stack" data-form="link-account">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="link" value="${input.linkToken}">
<div class="field">
<label for="password">Password of the existing account</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
</div>
<button type="submit" class="primary">Link and sign in</button>
</form>`;
  return renderPage({ title: 'Link your account', body, basePath: input.basePath });
}
