import { MINIMUM_PASSWORD_LENGTH } from '../account/common-passwords.js';
import { renderAccountWayOn } from './account-way-on.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

/** The forgot-password page of the contract: one `<form method="post">` with an input named `email`. */
export function renderForgotPasswordPage(input: {
  csrfToken: string;
  basePath: string;
  errorMessage?: string;
}): string {
  const body = html`<p class="lead">Enter the e-mail address of your account. If it belongs to an account, we send a link to choose a new password.</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="forgot-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="forgot-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" required autofocus>
</div>
<button type="submit" class="primary">Send the link</button>
</form>`;
  return renderPage({ title: 'Forgot your password?', body, basePath: input.basePath });
}

/** The same answer for every address (no account enumeration). */
export function renderForgotPasswordSentPage(input: { basePath: string; minutes: number }): string {
  const body = html`<p class="notice" role="status">If an account uses that address, a link to choose a new password is on its way to it.</p>
<p>The link works once, for ${input.minutes} minutes. Nothing arrived? Check the spam folder, or ask again in a few minutes.</p>`;
  return renderPage({ title: 'Check your mail', body, basePath: input.basePath });
}

/**
 * The page a mailed link opens: `new_password` and `confirm_password`, the token in a hidden field.
 * Opening it changes nothing (mail scanners open links); only submitting the form does.
 */
export function renderResetPasswordPage(input: {
  token: string;
  basePath: string;
  errorMessage?: string;
}): string {
  const body = html`<p class="lead">Choose a new password: at least ${MINIMUM_PASSWORD_LENGTH} characters, not a common one.</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="reset-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="reset-error"` : null}>
<input type="hidden" name="token" value="${input.token}">
<div class="field"><label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MINIMUM_PASSWORD_LENGTH}" required autofocus></div>
<div class="field"><label for="confirm_password">New password again</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="${MINIMUM_PASSWORD_LENGTH}" required></div>
<button type="submit" class="primary">Set the new password</button>
</form>`;
  return renderPage({ title: 'Choose a new password', body, basePath: input.basePath });
}

export function renderPasswordResetDonePage(input: { basePath: string }): string {
  const body = html`<p class="notice" role="status">Your password was changed. Every session of your account was signed out.</p>
<p>Go back to the application and sign in with the new password, or sign in to your account here.</p>
${renderAccountWayOn(input.basePath, 'Sign in to your account')}`;
  return renderPage({ title: 'Password changed', body, basePath: input.basePath });
}

export function renderResetLinkInvalidPage(input: { basePath: string }): string {
  const body = html`<p class="alert" role="alert">This link is no longer valid: it was already used, it expired, a newer link was sent, or the password was changed since.</p>
<p><a href="${input.basePath}/forgot-password">Ask for a new link</a></p>
${renderAccountWayOn(input.basePath)}`;
  return renderPage({ title: 'Link no longer valid', body, basePath: input.basePath });
}
