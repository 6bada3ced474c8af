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
}

/**
 * Authenticator app enrolment: the QR code and the secret in text, confirmed by a first valid code
 * in an input named `otp` (the same name as the sign-in form).
 */
export function renderEnrolTotpPage(input: EnrolTotpPageInput): string {
  const grouped = input.secret.replace(/(.{4})/g, '$1 ').trim();
  const body = html`${input.lead ? html`<p class="lead">${input.lead}</p>` : null}
${input.alternative ?? null}
<ol class="stack">
<li>Scan this code with an authenticator app:<br>
<img class="qr" src="${input.qrCodeDataUrl}" width="200" height="200" alt="QR code of the authenticator app secret"></li>
<li>Or enter this key: <code id="totp-secret" data-totp-secret="${input.secret}">${grouped}</code></li>
<li>Enter the 6-digit code the app shows.</li>
</ol>
${input.errorMessage ? html`<p class="alert" role="alert" id="enrol-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.action ? html` action="${input.action}"` : null}${input.errorMessage ? html` aria-describedby="enrol-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="enrolment" value="${input.enrolmentId}">
<div class="field">
<label for="otp">Code from your authenticator app</label>
<input id="otp" name="otp" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus>
</div>
<button type="submit" class="primary">Confirm</button>
</form>`;
  return renderPage({ title: 'Set up an authenticator app', body, basePath: input.basePath });
}
