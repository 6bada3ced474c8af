import type { MessageKey } from '../i18n/catalogues/en.js';
import { ENGLISH_PAGE, type PageLanguage, type Translator } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { PASSKEY_SCRIPTS, type PasskeyCeremonyForm } from './passkey.js';

export interface LoginPageInput {
  clientName: string;
  csrfToken: string;
  /** Pre-filled username (after a failed attempt, or from OIDC `login_hint`). */
  username?: string;
  /** Shown above the form; always the same generic text for any credential failure. */
  errorMessage?: string;
  basePath: string;
  /**
   * Ways in that start with a plain link (Kerberos: the SPNEGO exchange, README "Kerberos"): each a
   * GET link marked `data-sign-in="<signIn>"`, below the other buttons.
   */
  signInLinks?: readonly SignInLink[];
  /** Where the form posts when the page is not served from the login URL (the Kerberos challenge). */
  formAction?: string;
  /**
   * Signing in with a discoverable passkey, no username typed: one click on this page runs the
   * ceremony and posts to the passkey page's URL (which shows it again only when it failed).
   */
  passkey?: Pick<PasskeyCeremonyForm, 'options' | 'csrfToken' | 'action'>;
  /** Mail is on (README "Email"): the forgot-password page. */
  forgotPasswordHref?: string;
  /** Upstream OpenID providers (README "Upstream identity providers"): one button each. */
  identityProviders?: readonly { id: string; displayName: string; href: string }[];
  language?: PageLanguage;
}

export interface SignInLink {
  /** The `data-sign-in` value tests and scripts find it by (CONTRACT). */
  signIn: string;
  href: string;
  /** The catalogue message the link reads, so it is translated like every other word on the page. */
  label: MessageKey;
}

/**
 * The login page of the contract: one `<form method="post">` with `username` and `password`.
 * No `action`: the form posts back to the URL it was served from, which names the interaction.
 */
export function renderLoginPage(input: LoginPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p class="lead">${t.html('login.lead', { client: input.clientName })}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="login-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.formAction ? html` action="${input.formAction}"` : null}${input.errorMessage ? html` aria-describedby="login-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="username">${t.text('login.username')}</label>
<input id="username" name="username" type="text" value="${input.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required${input.username ? null : html` autofocus`}>
</div>
<div class="field">
<label for="password">${t.text('login.password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${input.username ? html` autofocus` : null}>
</div>
<button type="submit" class="primary">${t.text('login.submit')}</button>
</form>
${input.forgotPasswordHref ? html`<p><a href="${input.forgotPasswordHref}" data-action="forgot-password">${t.text('login.forgotPassword')}</a></p>` : null}
${input.passkey ? renderPasskeyButton(input.passkey, t) : null}
${renderIdentityProviderButtons(input.identityProviders ?? [], t)}
${(input.signInLinks ?? []).map((link) => html`<p><a href="${link.href}" data-sign-in="${link.signIn}">${t.text(link.label)}</a></p>`)}`;
  return renderPage({
    title: t.text('login.title'),
    body,
    language,
    basePath: input.basePath,
    scripts: input.passkey ? PASSKEY_SCRIPTS : [],
  });
}

/** CONTRACT "Upstream identity providers": `data-sign-in="idp:<id>"`, a GET link per provider. */
function renderIdentityProviderButtons(
  providers: NonNullable<LoginPageInput['identityProviders']>,
  t: Translator,
) {
  if (providers.length === 0) return null;
  return html`<div class="stack">${providers.map(
    (provider) =>
      html`<a class="button secondary" href="${provider.href}" data-sign-in="idp:${provider.id}">${t.text('login.withProvider', { provider: provider.displayName })}</a>`,
  )}</div>`;
}

/**
 * The passkey action beside the login form: a secondary button, not a form of its own, so the page's
 * hidden fields stay those of the login form. The ceremony script shows it when the browser can
 * use passkeys, runs the ceremony on click and posts the result (with its own CSRF token) to
 * `action`; without script it stays hidden, as a passkey cannot work without one.
 */
function renderPasskeyButton(passkey: NonNullable<LoginPageInput['passkey']>, t: Translator) {
  return html`<div class="stack passkey-action">
<p class="alert" role="alert" data-passkey-error hidden></p>
<button type="button" class="secondary" data-sign-in="passkey" data-passkey-action="${passkey.action ?? ''}" data-passkey-csrf="${passkey.csrfToken}" data-passkey-options="${JSON.stringify(passkey.options)}" hidden>${t.text('login.withPasskey')}</button>
</div>`;
}
