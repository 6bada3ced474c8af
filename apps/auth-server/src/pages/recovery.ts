import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html, type SafeHtml } from './html.js';
import { renderPage } from './layout.js';

export interface RecoveryCodePageInput {
  clientName: string;
  csrfToken: string;
  errorMessage?: string;
  basePath: string;
  /** The code page this one was reached from, to go back to. */
  otpUrl: string;
  language?: PageLanguage;
}

/** Sign-in with a recovery code instead of the app: one form with an input named `recovery_code`. */
export function renderRecoveryCodePage(input: RecoveryCodePageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.html('login.lead', { client: input.clientName })}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="recovery-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="recovery-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="recovery_code">${t.text('recovery.label')}</label>
<span class="muted" id="recovery-format">${t.text('recovery.format')}</span>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" aria-describedby="recovery-format" required autofocus>
</div>
<button type="submit" class="primary">${t.text('recovery.submit')}</button>
</form>
<p><a href="${input.otpUrl}" data-link="otp">${t.text('recovery.useApp')}</a></p>`;
  return renderPage({ title: t.text('recovery.title'), body, basePath: input.basePath, language });
}

export interface RecoveryCodesShownInput {
  codes: readonly string[];
  /** The form that continues (to the application, or back to the account page). */
  continueCsrfToken: string;
  continueAction?: string;
  basePath: string;
  language?: PageLanguage;
}

/**
 * The new set, shown once: each code works one time when the authenticator app is not at hand.
 * The copy script's two answers are hidden elements of the page, so they are in its language.
 */
export function renderRecoveryCodesShownPage(input: RecoveryCodesShownInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.text('recoveryCodes.lead')}</p>
<ul class="recovery-codes" id="recovery-codes">
${input.codes.map((code) => html`<li><code data-recovery-code="${code}">${code}</code></li>`)}
</ul>
<div class="actions recovery-actions">
<button type="button" class="secondary" id="copy-recovery-codes" hidden>${t.text('recoveryCodes.copy')}</button>
<a class="button secondary" href="data:text/plain;charset=utf-8,${encodeURIComponent(`${input.codes.join('\n')}\n`)}" download="recovery-codes.txt" data-action="download-recovery-codes">${t.text('recoveryCodes.download')}</a>
</div>
<p class="muted" id="recovery-codes-status" role="status" aria-live="polite"></p>
<p hidden id="recovery-codes-copied">${t.text('recoveryCodes.copied')}</p>
<p hidden id="recovery-codes-copy-refused">${t.text('recoveryCodes.copyRefused')}</p>
<form method="post" class="stack"${input.continueAction ? html` action="${input.continueAction}"` : null}>
<input type="hidden" name="csrf" value="${input.continueCsrfToken}">
<button type="submit" class="primary">${t.text('recoveryCodes.continue')}</button>
</form>`;
  return renderPage({
    title: t.text('recoveryCodes.title'),
    body,
    basePath: input.basePath,
    scripts: ['recovery-codes.js'],
    language,
  });
}

export interface RecoveryCodeUsedInput {
  remaining: number;
  /** Goes on with the sign-in. */
  continueUrl: string;
  accountUrl: string;
  basePath: string;
  language?: PageLanguage;
}

/** After a recovery code signed the person in: it is used up, and how many are left. */
export function renderRecoveryCodeUsedPage(input: RecoveryCodeUsedInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const accountLink = html`<a href="${input.accountUrl}">${t.text('recovery.accountPage')}</a>`;
  const left = (content: SafeHtml) =>
    html`<strong id="recovery-left" data-remaining="${input.remaining}">${content}</strong>`;
  const body = html`<p class="notice" role="status">${t.html('recovery.usedUp', { remaining: input.remaining, left })}</p>
<p>${t.html(input.remaining <= 3 ? 'recovery.getNewSetSoon' : 'recovery.getNewSetAnyTime', { accountLink })}</p>
<p><a class="button" href="${input.continueUrl}" data-action="continue">${t.text('recovery.continue')}</a></p>`;
  return renderPage({ title: t.text('recovery.usedTitle'), body, basePath: input.basePath, language });
}
