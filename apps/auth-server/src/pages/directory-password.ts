import { html } from './html.js';
import { renderPage } from './layout.js';

/**
 * The change-password step of a directory sign-in whose password expired or must be changed: the
 * directory checks the current password and its own policy; the new one is never stored here.
 */
export function renderDirectoryPasswordPage(input: {
  csrfToken: string;
  action: string;
  username: string;
  basePath: string;
  reason: 'expired' | 'must_change';
  errorMessage?: string;
  /** The bind was a grace login after expiry; this many remain before the account cannot bind. */
  graceLoginsLeft?: number;
}): string {
  const lead =
    input.reason === 'must_change'
      ? 'Your directory password must be changed before you continue. Choose a new one.'
      : input.graceLoginsLeft === undefined
        ? 'Your directory password has expired. Choose a new one to continue.'
        : `Your directory password has expired. ${graceSentence(input.graceLoginsLeft)} Choose a new one to continue.`;
  const body = html`<p class="lead">${lead}</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="directory-password-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack" action="${input.action}"${input.errorMessage ? html` aria-describedby="directory-password-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="username" value="${input.username}">
<input type="hidden" name="reason" value="${input.reason}">
<div class="field"><label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required autofocus></div>
<div class="field"><label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" required></div>
<div class="field"><label for="confirm_password">New password again</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" required></div>
<button type="submit" class="primary">Change the password and continue</button>
</form>`;
  return renderPage({ title: 'Change your password', body, basePath: input.basePath });
}

function graceSentence(left: number): string {
  if (left === 0) return 'This was your last sign-in with it.';
  return `You can sign in with it ${left} more ${left === 1 ? 'time' : 'times'}.`;
}
