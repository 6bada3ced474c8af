import { html } from './html.js';
import { renderPage } from './layout.js';

export interface LinkAccountPageInput {
  providerName: string;
  email: string;
  csrfToken: string;
  linkToken: string;
  /** The password proof's form action; `null` when the account has no password here. */
  passwordAction: string | null;
  /** The mailed proof's form action; `null` when mail is off (or the account has no address). */
  mailAction: string | null;
  /** Back to the login page, when neither proof is possible. */
  loginUrl: string;
  errorMessage?: string;
  basePath: string;
}

/**
 * Linking a first federated sign-in to the existing account with the same verified address: the
 * account's owner proves it with their password or with a link mailed to the account's address;
 * nothing is linked without one of them.
 */
export function renderLinkAccountPage(input: LinkAccountPageInput): string {
  const hiddenFields = html`<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="link" value="${input.linkToken}">`;
  const passwordForm = input.passwordAction
    ? html`<form method="post" action="${input.passwordAction}" class="stack" data-form="link-account">
${hiddenFields}
<div class="field">
<label for="password">Password of the existing account</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
</div>
<button type="submit" class="primary">Link and sign in</button>
</form>`
    : null;
  const mailForm = input.mailAction
    ? html`<form method="post" action="${input.mailAction}" class="stack" data-form="link-account-mail">
${hiddenFields}
<button type="submit" class="${input.passwordAction ? 'secondary' : 'primary'}">E-mail me a link</button>
</form>`
    : null;
  const proofs =
    passwordForm || mailForm
      ? html`<p>To use ${input.providerName} to sign in to it from now on, prove that it is yours${passwordForm ? ' with its password' : ''}${passwordForm && mailForm ? ', or' : ''}${mailForm ? ' with a link we mail to its address' : ''}.</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="link-error">${input.errorMessage}</p>` : null}
${passwordForm}${mailForm}`
      : html`<p data-link="unavailable">It cannot be linked to ${input.providerName} here: sign in the usual way, then link ${input.providerName} from your account page.</p>
<p><a class="button" href="${input.loginUrl}">Back to signing in</a></p>`;
  const body = html`<p class="lead">An account with the address <strong>${input.email}</strong> already exists here.</p>
${proofs}`;
  return renderPage({ title: 'Link your account', body, basePath: input.basePath });
}

/** After "E-mail me a link": where the link went (masked), and that it works in this browser only. */
export function renderLinkMailSentPage(input: {
  providerName: string;
  maskedEmail: string;
  minutes: number;
  basePath: string;
}): string {
  const body = html`<p class="lead" role="status" data-link-mail="sent">We sent a link to ${input.maskedEmail}.</p>
<p>Open it in this browser within ${input.minutes} minutes to use ${input.providerName} to sign in to that account. Until then nothing is linked.</p>`;
  return renderPage({ title: 'Check your mail', body, basePath: input.basePath });
}

/**
 * The mailed link's page: a button, so that a mail scanner opening the link uses nothing up (the
 * POST does, from the browser where the sign-in started).
 */
export function renderMailedLinkPage(input: {
  providerName: string;
  maskedEmail: string;
  action: string;
  csrfToken: string;
  token: string;
  basePath: string;
}): string {
  const body = html`<p class="lead">Use ${input.providerName} to sign in to the account of ${input.maskedEmail} from now on?</p>
<form method="post" action="${input.action}" class="stack" data-form="mailed-link">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="token" value="${input.token}">
<button type="submit" class="primary">Link and sign in</button>
</form>`;
  return renderPage({ title: 'Link your account', body, basePath: input.basePath });
}
