import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html, type SafeHtml } from './html.js';
import { renderPage } from './layout.js';

export interface EnrolTotpPageInput {
  /** Why enrolment is needed now (the application requires it), or `undefined` on the account page. */
  lead?: string;
  /** Another way to enrol, shown under the lead (a passkey). */
  alternative?: SafeHtml;
  csrfToken: string;
  /** Base32 secret, for manual entry (`data-totp-secret` lets a test or a password manager read it). */
  secret: string;
  /** `data:image/svg+xml` of the otpauth:// URI as a QR code (rendered on the server). */
  qrCodeDataUrl: string;
  /** The pending enrolment this page confirms. */
  enrolmentId: string;
  errorMessage?: string;
  basePath: string;
  /** Where the form posts; the page's own URL when absent. */
  action?: string;
  language?: PageLanguage;
}

/**
 * Authenticator app enrolment: the QR code and the secret in text, confirmed by a first valid code
 * in an input named `otp` (the same name as the sign-in form).
 */
export function renderEnrolTotpPage(input: EnrolTotpPageInput): string {
  const grouped = input.secret.replace(/(.{4})/g, '$1 ').trim();
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const key = () => html`<code id="totp-secret" data-totp-secret="${input.secret}">${grouped}</code>`;
  const body = html`${input.lead ? html`<p class="lead">${input.lead}</p>` : null}
${input.alternative ?? null}
<ol class="stack">
<li>${t.text('enrol.scan')}<br>
<img class="qr" src="${input.qrCodeDataUrl}" width="200" height="200" alt="${t.text('enrol.qrAlt')}"></li>
<li>${t.html('enrol.key', { key })}</li>
<li>${t.text('enrol.enterCode')}</li>
</ol>
${input.errorMessage ? html`<p class="alert" role="alert" id="enrol-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.action ? html` action="${input.action}"` : null}${input.errorMessage ? html` aria-describedby="enrol-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="enrolment" value="${input.enrolmentId}">
<div class="field">
<label for="otp">${t.text('otp.label')}</label>
<input id="otp" name="otp" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus>
</div>
<button type="submit" class="primary">${t.text('enrol.submit')}</button>
</form>`;
  return renderPage({ title: t.text('enrol.title'), body, basePath: input.basePath, language });
}
