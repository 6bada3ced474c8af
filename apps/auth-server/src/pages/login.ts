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
}

export interface SignInLink {
  /** The `data-sign-in` value tests and scripts find it by (CONTRACT). */
  signIn: string;
  href: string;
  label: string;
}

/**
 * The login page of the contract: one `<form method="post">` with `username` and `password`.
 * No `action`: the form posts back to the URL it was served from, which names the interaction.
 */
export function renderLoginPage(input: LoginPageInput): string {
  const body = html`<p class="lead">to continue to <strong>${input.clientName}</strong></p>
${input.errorMessage ? html`<p class="alert" role="alert" id="login-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.formAction ? html` action="${input.formAction}"` : null}${input.errorMessage ? html` aria-describedby="login-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="username">Username</label>
<input id="username" name="username" type="text" value="${input.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required${input.username ? null : html` autofocus`}>
</div>
<div class="field">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${input.username ? html` autofocus` : null}>
</div>
<button type="submit" class="primary">Sign in</button>
</form>
${input.forgotPasswordHref ? html`<p><a href="${input.forgotPasswordHref}" data-action="forgot-password">Forgot your password?</a></p>` : null}
${input.passkey ? renderPasskeyButton(input.passkey) : null}
${renderIdentityProviderButtons(input.identityProviders ?? [])}
${(input.signInLinks ?? []).map((link) => html`<p><a href="${link.href}" data-sign-in="${link.signIn}">${link.label}</a></p>`)}`;
  return renderPage({
    title: 'Sign in',
    body,
    basePath: input.basePath,
    scripts: input.passkey ? PASSKEY_SCRIPTS : [],
  });
}

/** CONTRACT "Upstream identity providers": `data-sign-in="idp:<id>"`, a GET link per provider. */
function renderIdentityProviderButtons(providers: NonNullable<LoginPageInput['identityProviders']>) {
  if (providers.length === 0) return null;
  return html`<div class="stack">${providers.map(
    (provider) =>
      html`<a class="button secondary" href="${provider.href}" data-sign-in="idp:${provider.id}">Sign in with ${provider.displayName}</a>`,
  )}</div>`;
}

/**
 * The passkey action beside the login form: a secondary button, not a form of its own, so the page's
 * hidden fields stay those of the login form. The ceremony script shows it when the browser can
 * use passkeys, runs the ceremony on click and posts the result (with its own CSRF token) to
 * `action`; without script it stays hidden, as a passkey cannot work without one.
 */
function renderPasskeyButton(passkey: NonNullable<LoginPageInput['passkey']>) {
  return html`<div class="stack passkey-action">
<p class="alert" role="alert" data-passkey-error hidden></p>
<button type="button" class="secondary" data-sign-in="passkey" data-passkey-action="${passkey.action ?? ''}" data-passkey-csrf="${passkey.csrfToken}" data-passkey-options="${JSON.stringify(passkey.options)}" hidden>Sign in with a passkey</button>
</div>`;
}
