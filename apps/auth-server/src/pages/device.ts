import { html } from './html.js';
import { renderPage } from './layout.js';

export interface DeviceCodePageInput {
  csrfToken: string;
  /** Pre-filled code (from `verification_uri_complete`, or what was typed before an error). */
  userCode?: string;
  /** Shown above the form when the code was not accepted. */
  errorMessage?: string;
  basePath: string;
}

/**
 * The verification page of the contract (RFC 8628 §3.3): one `<form method="post">` with an input
 * named `user_code`. No `action`: it posts back to /device. A pre-filled code (from
 * `verification_uri_complete`) still needs the user's click, so a link alone approves nothing and
 * the user sees the code to compare with the device (RFC 8628 §3.3.1, §5.4).
 */
export function renderDeviceCodePage(input: DeviceCodePageInput): string {
  const body = html`<p class="lead">Enter the code shown on your device.</p>
${input.errorMessage ? html`<p class="alert" role="alert" id="user-code-error">${input.errorMessage}</p>` : null}
<form method="post" class="stack"${input.errorMessage ? html` aria-describedby="user-code-error"` : null}>
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="field">
<label for="user_code">Code</label>
<input id="user_code" name="user_code" type="text" value="${input.userCode ?? ''}" placeholder="XXXX-XXXX" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="32" required autofocus>
</div>
<button type="submit" class="primary">Continue</button>
</form>
<p class="muted">Only continue if you started signing in on a device of your own just now.</p>`;
  return renderPage({ title: 'Connect a device', body, basePath: input.basePath });
}

export interface DeviceOutcomePageInput {
  outcome: 'approved' | 'denied';
  clientName: string;
  basePath: string;
}

/** After the decision: nothing more happens in the browser; the device picks the result up by polling. */
export function renderDeviceOutcomePage(input: DeviceOutcomePageInput): string {
  if (input.outcome === 'approved') {
    const body = html`<p><strong>${input.clientName}</strong> is now signed in on your device.</p>
<p class="muted">You can close this window and return to your device.</p>`;
    return renderPage({ title: 'Device connected', body, basePath: input.basePath });
  }
  const body = html`<p><strong>${input.clientName}</strong> was not given access.</p>
<p class="muted">You can close this window. The device will report that access was denied.</p>`;
  return renderPage({ title: 'Access denied', body, basePath: input.basePath });
}
