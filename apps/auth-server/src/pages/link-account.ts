import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
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
  language?: PageLanguage;
}

/**
 * Linking a first federated sign-in to the existing account with the same verified address: the
 * account's owner proves it with their password or with a link mailed to the account's address;
 * nothing is linked without one of them.
 */
export function renderLinkAccountPage(input: LinkAccountPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const hiddenFields = html`<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="link" value="${input.linkToken}">`;
  const passwordForm = input.passwordAction
    ? html`<form method="post" action="${input.passwordAction}" class="stack" data-form="link-account">
${hiddenFields}
<div class="field">
<label for="password">${t.text('link.password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
</div>
<button type="submit" class="primary">${t.text('link.submit')}</button>
</form>`
    : null;
  const mailForm = input.mailAction
    ? html`<form method="post" action="${input.mailAction}" class="stack" data-form="link-account-mail">
${hiddenFields}
<button type="submit" class="${input.passwordAction ? 'secondary' : 'primary'}">${t.text('link.mailMe')}</button>
</form>`
    : null;
  const proofs =
    passwordForm || mailForm
      ? html`<p>${t.text('link.prove', { provider: input.providerName, ways: passwordForm && mailForm ? 'both' : passwordForm ? 'password' : 'mail' })}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="link-error">${input.errorMessage}</p>` : null}
${passwordForm}${mailForm}`
      : html`<p data-link="unavailable">${t.text('link.unavailable', { provider: input.providerName })}</p>
<p><a class="button" href="${input.loginUrl}">${t.text('link.backToLogin')}</a></p>`;
  const body = html`<p class="lead">${t.html('link.lead', { email: input.email })}</p>
${proofs}`;
  return renderPage({ title: t.text('link.title'), body, basePath: input.basePath, language });
}

/** After "E-mail me a link": where the link went (masked), and that it works in this browser only. */
export function renderLinkMailSentPage(input: {
  providerName: string;
  maskedEmail: string;
  minutes: number;
  basePath: string;
  language?: PageLanguage;
}): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead" role="status" data-link-mail="sent">${t.text('link.mailSent', { address: input.maskedEmail })}</p>
<p>${t.text('link.mailSentAdvice', { minutes: input.minutes, provider: input.providerName })}</p>`;
  return renderPage({ title: t.text('link.mailSentTitle'), body, basePath: input.basePath, language });
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
  language?: PageLanguage;
}): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.text('link.mailedQuestion', { provider: input.providerName, address: input.maskedEmail })}</p>
<form method="post" action="${input.action}" class="stack" data-form="mailed-link">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="token" value="${input.token}">
<button type="submit" class="primary">${t.text('link.submit')}</button>
</form>`;
  return renderPage({ title: t.text('link.title'), body, basePath: input.basePath, language });
}
