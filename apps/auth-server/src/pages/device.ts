import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

export interface DeviceCodePageInput {
  csrfToken: string;
  /** Pre-filled code (from `verification_uri_complete`, or what was typed before an error). */
  userCode?: string;
  /** Shown above the form when the code was not accepted. */
  errorMessage?: string;
  basePath: string;
  language?: PageLanguage;
}

/**
 * RFC 8628 §3.3 verification page: one form with an input named `user_code`. The code may come
 * pre-filled from `verification_uri_complete`, but the user still has to submit it.
 */
export function renderDeviceCodePage(input: DeviceCodePageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.text('device.lead')}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="user-code-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="user-code-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="user_code">${t.text('device.code')}</label>
<input id="user_code" name="user_code" type="text" value="${input.userCode ?? ''}" placeholder="XXXX-XXXX" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="32" required autofocus>
</div>
<button type="submit" class="primary">${t.text('device.submit')}</button>
</form>
<p class="muted">${t.text('device.warning')}</p>`;
  return renderPage({ title: t.text('device.title'), body, basePath: input.basePath, language });
}

export interface DeviceOutcomePageInput {
  outcome: 'approved' | 'denied';
  clientName: string;
  basePath: string;
  language?: PageLanguage;
}

/** After the consent decision: tells the user to go back to their device. */
export function renderDeviceOutcomePage(input: DeviceOutcomePageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  if (input.outcome === 'approved') {
    const body = html`<p>${t.html('device.approved', { client: input.clientName })}</p>
<p class="muted">${t.text('device.approvedAdvice')}</p>`;
    return renderPage({ title: t.text('device.approvedTitle'), body, basePath: input.basePath, language });
  }
  const body = html`<p>${t.html('device.denied', { client: input.clientName })}</p>
<p class="muted">${t.text('device.deniedAdvice')}</p>`;
  return renderPage({ title: t.text('device.deniedTitle'), body, basePath: input.basePath, language });
}
