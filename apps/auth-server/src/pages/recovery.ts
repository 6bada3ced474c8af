import { html } from './html.js';
import { renderPage } from './layout.js';

export interface RecoveryCodePageInput {
  clientName: string;
  csrfToken: string;
  errorMessage?: string;
  basePath: string;
  /** The code page this one was reached from, to go back to. */
  otpUrl: string;
}

/** Sign-in with a recovery code instead of the app: one form with an input named `recovery_code`. */
export function renderRecoveryCodePage(input: RecoveryCodePageInput): string {
  const body = html`<p class="lead">to continue to <strong>${input.clientName}</strong></p>
${input.errorMessage ? html`<p class="alert" role="alert" id="recovery-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="recovery-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="recovery_code">Recovery code</label>
<span class="muted" id="recovery-format">Ten letters and digits from your saved list, like ABCDE-23456 (the dash and case do not matter).</span>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" aria-describedby="recovery-format" required autofocus>
</div>
<button type="submit" class="primary">Verify</button>
</form>
<p><a href="${input.otpUrl}" data-link="otp">Use the code from your authenticator app instead</a></p>`;
  return renderPage({ title: 'Use a recovery code', body, basePath: input.basePath });
}

export interface RecoveryCodesShownInput {
  codes: readonly string[];
  /** The form that continues (to the application, or back to the account page). */
  continueCsrfToken: string;
  continueAction?: string;
  basePath: string;
}

/** The new set, shown once: each code works one time when the authenticator app is not at hand. */
export function renderRecoveryCodesShownPage(input: RecoveryCodesShownInput): string {
  const body = html`<p class="lead">Keep these codes somewhere safe. Each one signs you in once if you lose your authenticator app. They are shown only now.</p>
<ul class="recovery-codes" id="recovery-codes">
${input.codes.map((code) => html`<li><code data-recovery-code="${code}">${code}</code></li>`)}
</ul>
<div class="actions recovery-actions">
<button type="button" class="secondary" id="copy-recovery-codes" hidden>Copy</button>
<a class="button secondary" href="data:text/plain;charset=utf-8,${encodeURIComponent(`${input.codes.join('\n')}\n`)}" download="recovery-codes.txt" data-action="download-recovery-codes">Download</a>
</div>
<p class="muted" id="recovery-codes-status" role="status" aria-live="polite"></p>
<form method="post" class="stack"${input.continueAction ? html` action="${input.continueAction}"` : null}>
<input type="hidden" name="csrf" value="${input.continueCsrfToken}">
<button type="submit" class="primary">I have saved them, continue</button>
</form>`;
  return renderPage({
    title: 'Your recovery codes',
    body,
    basePath: input.basePath,
    scripts: ['recovery-codes.js'],
  });
}

export interface RecoveryCodeUsedInput {
  remaining: number;
  /** Goes on with the sign-in. */
  continueUrl: string;
  accountUrl: string;
  basePath: string;
}

/** After a recovery code signed the person in: it is used up, and how many are left. */
export function renderRecoveryCodeUsedPage(input: RecoveryCodeUsedInput): string {
  const left = input.remaining === 1 ? '1 recovery code left' : `${input.remaining} recovery codes left`;
  const body = html`<p class="notice" role="status">That recovery code is now used up. You have <strong id="recovery-left" data-remaining="${input.remaining}">${left}</strong>.</p>
<p>${input.remaining <= 3 ? 'Get a new set soon on' : 'You can get a new set any time on'} <a href="${input.accountUrl}">your account page</a>.</p>
<p><a class="button" href="${input.continueUrl}" data-action="continue">Continue</a></p>`;
  return renderPage({ title: 'Recovery code accepted', body, basePath: input.basePath });
}
