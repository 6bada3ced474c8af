import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

export interface OtpPageInput {
  clientName: string;
  csrfToken: string;
  /** Shown above the form after a wrong, replayed or rate-limited code. */
  errorMessage?: string;
  basePath: string;
  /** The linked page that takes a recovery code instead. */
  recoveryUrl: string;
  /** The passkey page, when the user has a passkey. */
  passkeyUrl?: string;
  language?: PageLanguage;
}

/**
 * The second step of the contract: one `<form method="post">` with an input named `otp`. Posts
 * back to its own URL (the interaction's otp page). Never asks for the password: a step-up on a
 * session that already completed it shows this page alone.
 */
export function renderOtpPage(input: OtpPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.html('login.lead', { client: input.clientName })}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="otp-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="otp-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="otp">${t.text('otp.label')}</label>
<input id="otp" name="otp" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus>
</div>
<button type="submit" class="primary">${t.text('otp.submit')}</button>
</form>
${input.passkeyUrl ? html`<p><a href="${input.passkeyUrl}" data-link="passkey">${t.text('otp.usePasskey')}</a></p>` : null}
<p><a href="${input.recoveryUrl}" data-link="recovery-code">${t.text('otp.useRecoveryCode')}</a></p>`;
  return renderPage({ title: t.text('otp.title'), body, basePath: input.basePath, language });
}
