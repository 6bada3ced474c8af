import { MINIMUM_PASSWORD_LENGTH } from '../account/common-passwords.js';
import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { renderAccountWayOn } from './account-way-on.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

/** The forgot-password page of the contract: one `<form method="post">` with an input named `email`. */
export function renderForgotPasswordPage(input: {
  csrfToken: string;
  basePath: string;
  errorMessage?: string;
  language?: PageLanguage;
}): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.text('forgot.lead')}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="forgot-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="forgot-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="email">${t.text('forgot.email')}</label>
<input id="email" name="email" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" required autofocus>
</div>
<button type="submit" class="primary">${t.text('forgot.submit')}</button>
</form>`;
  return renderPage({ title: t.text('forgot.title'), body, basePath: input.basePath, language });
}

/** The same answer for every address (no account enumeration). */
export function renderForgotPasswordSentPage(input: {
  basePath: string;
  minutes: number;
  language?: PageLanguage;
}): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="notice" role="status">${t.text('forgot.sent')}</p>
<p>${t.text('forgot.sentAdvice', { minutes: input.minutes })}</p>`;
  return renderPage({ title: t.text('forgot.sentTitle'), body, basePath: input.basePath, language });
}

/**
 * The page a mailed link opens: `new_password` and `confirm_password`, the token in a hidden field.
 * Opening it changes nothing (mail scanners open links); only submitting the form does.
 */
export function renderResetPasswordPage(input: {
  token: string;
  basePath: string;
  errorMessage?: string;
  language?: PageLanguage;
}): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.text('reset.lead', { length: MINIMUM_PASSWORD_LENGTH })}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="reset-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="reset-error"` : null}>
<input type="hidden" name="token" value="${input.token}">
<div class="field"><label for="new_password">${t.text('reset.newPassword')}</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MINIMUM_PASSWORD_LENGTH}" required autofocus></div>
<div class="field"><label for="confirm_password">${t.text('reset.confirmPassword')}</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="${MINIMUM_PASSWORD_LENGTH}" required></div>
<button type="submit" class="primary">${t.text('reset.submit')}</button>
</form>`;
  return renderPage({ title: t.text('reset.title'), body, basePath: input.basePath, language });
}

export function renderPasswordResetDonePage(input: { basePath: string; language?: PageLanguage }): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="notice" role="status">${t.text('reset.done')}</p>
<p>${t.text('reset.doneAdvice')}</p>
${renderAccountWayOn(input.basePath, t.text('reset.signInToAccount'))}`;
  return renderPage({ title: t.text('reset.doneTitle'), body, basePath: input.basePath, language });
}

export function renderResetLinkInvalidPage(input: { basePath: string; language?: PageLanguage }): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="alert" role="alert">${t.text('reset.invalid')}</p>
<p><a href="${input.basePath}/forgot-password">${t.text('reset.askAgain')}</a></p>
${renderAccountWayOn(input.basePath, t.text('error.accountPage'))}`;
  return renderPage({ title: t.text('reset.invalidTitle'), body, basePath: input.basePath, language });
}
