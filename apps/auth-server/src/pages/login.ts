import { html } from './html.js';
import { renderPage } from './layout.js';

export interface LoginPageInput {
  clientName: string;
  csrfToken: string;
  /** Pre-filled username (after a failed attempt, or from OIDC `login_hint`). */
  username?: string;
  /** Shown above the form; always the same generic text for any credential failure. */
  errorMessage?: string;
  basePath: string;
  /** Kerberos on: the link that starts the SPNEGO exchange (README "Kerberos"). */
  kerberosHref?: string;
  /** Where the form posts when the page is not served from the login URL (the Kerberos challenge). */
  formAction?: string;
  /** The passkey page: signing in with a discoverable credential, no username typed. */
  passkeyHref?: string;
  /** Mail is on (README "Email"): the forgot-password page. */
  forgotPasswordHref?: string;
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
${input.passkeyHref ? html`<p><a href="${input.passkeyHref}" class="button" data-sign-in="passkey">Sign in with a passkey</a></p>` : null}
${input.kerberosHref ? html`<p><a href="${input.kerberosHref}" data-sign-in="kerberos">Sign in with your organisation account (Kerberos)</a></p>` : null}`;
  return renderPage({ title: 'Sign in', body, basePath: input.basePath });
}
