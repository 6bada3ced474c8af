import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html, type SafeHtml } from './html.js';
import { renderPage } from './layout.js';

/**
 * The passkey pages. The browser side is two external scripts (the CSP allows no inline script):
 * @simplewebauthn/browser's bundle and src/pages/passkey-ceremony.js, which runs the ceremony of a
 * form marked `data-passkey-ceremony` and posts its result in the hidden `credential` field.
 */
export const PASSKEY_SCRIPTS = ['simplewebauthn-browser.js', 'passkey.js'] as const;

export interface PasskeyCeremonyForm {
  ceremony: 'register' | 'authenticate';
  /** WebAuthn §5.4 / §5.5 options as JSON (the server's `…OptionsJSON`). */
  options: unknown;
  csrfToken: string;
  /** Where the form posts; the page's own URL when absent. */
  action?: string;
  buttonLabel: string;
  /** Extra fields inside the form, before the button (the passkey's name). */
  fields?: SafeHtml;
}

/** One form that runs a WebAuthn ceremony when submitted, and says so when it failed. */
export function passkeyCeremonyForm(form: PasskeyCeremonyForm): SafeHtml {
  return html`<form method="post" class="stack"${form.action ? html` action="${form.action}"` : null} data-passkey-ceremony="${form.ceremony}" data-passkey-options="${JSON.stringify(form.options)}">
<input type="hidden" name="csrf" value="${form.csrfToken}">
<input type="hidden" name="credential" value="">
${form.fields ?? null}
<p class="alert" role="alert" data-passkey-error hidden></p>
<button type="submit" class="primary">${form.buttonLabel}</button>
</form>`;
}

export interface EnrolPasskeyPageInput {
  form: Omit<PasskeyCeremonyForm, 'ceremony' | 'buttonLabel' | 'fields'>;
  /** The name proposed for the new passkey. */
  name: string;
  /** Why enrolment is needed now (the application requires it), or `undefined` on the account page. */
  lead?: string;
  errorMessage?: string;
  basePath: string;
  /** Other ways on (back to the account page, an authenticator app instead). */
  links?: SafeHtml;
  language?: PageLanguage;
}

/** Creating a passkey: a name for it, then the browser's own dialog (WebAuthn §7.1). */
export function renderEnrolPasskeyPage(input: EnrolPasskeyPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const nameField = html`<div class="field">
<label for="passkey-name">${t.text('passkeyEnrol.name')}</label>
<input id="passkey-name" name="name" type="text" value="${input.name}" maxlength="60" required>
</div>`;
  const body = html`${input.lead ? html`<p class="lead">${input.lead}</p>` : null}
<p>${t.text('passkeyEnrol.explain')}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="passkey-failed">${input.errorMessage}</p>` : null}
${passkeyCeremonyForm({ ...input.form, ceremony: 'register', buttonLabel: t.text('passkeyEnrol.submit'), fields: nameField })}
${input.links ?? null}`;
  return renderPage({
    title: t.text('passkeyEnrol.title'),
    body,
    basePath: input.basePath,
    scripts: PASSKEY_SCRIPTS,
    language,
  });
}

export interface PasskeySignInPageInput {
  form: Omit<PasskeyCeremonyForm, 'ceremony' | 'buttonLabel' | 'fields'>;
  clientName: string;
  /** Second factor after the password (the user is known), or the whole sign-in. */
  secondFactor: boolean;
  errorMessage?: string;
  basePath: string;
  /** Other ways on (password, authenticator code). */
  links?: SafeHtml;
  language?: PageLanguage;
}

/** Signing in with a passkey (WebAuthn §7.2), alone or as the second step. */
export function renderPasskeySignInPage(input: PasskeySignInPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const buttonLabel = t.text(input.secondFactor ? 'passkey.use' : 'login.withPasskey');
  const body = html`<p class="lead">${t.html('login.lead', { client: input.clientName })}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="passkey-failed">${input.errorMessage}</p>` : null}
${passkeyCeremonyForm({ ...input.form, ceremony: 'authenticate', buttonLabel })}
${input.links ?? null}`;
  return renderPage({
    language,
    title: t.text(input.secondFactor ? 'otp.title' : 'login.withPasskey'),
    body,
    basePath: input.basePath,
    scripts: PASSKEY_SCRIPTS,
  });
}
