import { html, type SafeHtml } from './html.js';
import { renderPage } from './layout.js';

export interface AccountPageInput {
  name: string | null;
  email: string | null;
  /** Shown beside the address; with mail on, an unverified address gets a "send a link" button. */
  emailVerified?: boolean;
  canVerifyEmail?: boolean;
  username: string;
  csrfToken: string;
  authenticatorApps: ReadonlyArray<{
    id: string;
    name: string;
    createdAt: number;
    lastUsedAt: number | null;
  }>;
  passkeys: ReadonlyArray<{
    id: string;
    name: string;
    synced: boolean;
    createdAt: number;
    lastUsedAt: number | null;
  }>;
  recoveryCodesRemaining: number;
  sessions: ReadonlyArray<{
    /** Readable device and browser ("Chrome on Linux"), from the User-Agent at sign-in. */
    device: string;
    /** Client address of the sign-in, or null when unknown. */
    ip: string | null;
    createdAt: number;
    lastUsedAt: number | null;
    /** The session of the browser showing the page. */
    current: boolean;
  }>;
  apps: ReadonlyArray<{ clientId: string; clientName: string; scopes: readonly string[]; offline: boolean }>;
  /** A short confirmation or error after a change. */
  notice?: { kind: 'ok' | 'error'; text: string };
  basePath: string;
}

const when = (seconds: number) => new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 16);

/**
 * The account page (/account): every change is a `<form method="post">` with the CSRF token, each
 * control labelled, headings in order, so it works by keyboard and screen reader.
 */
export function renderAccountPage(input: AccountPageInput): string {
  const csrf = html`<input type="hidden" name="csrf" value="${input.csrfToken}">`;
  const base = `${input.basePath}/account`;
  const apps = input.authenticatorApps.map(
    (app) => html`<li data-factor="${app.id}">
<form method="post" action="${base}/totp/${app.id}/rename" class="inline">${csrf}
<label for="name-${app.id}">Name</label>
<input id="name-${app.id}" name="name" type="text" value="${app.name}" maxlength="60" required>
<button type="submit" class="secondary">Rename</button>
</form>
<span>added ${when(app.createdAt)}${app.lastUsedAt === null ? null : html`, last used ${when(app.lastUsedAt)}`}</span>
<form method="post" action="${base}/totp/${app.id}/remove" class="inline">${csrf}
<button type="submit" class="secondary" aria-label="Remove ${app.name}">Remove</button>
</form>
</li>`,
  );
  const passkeyItems = input.passkeys.map(
    (passkey) => html`<li data-passkey="${passkey.id}">
<form method="post" action="${base}/passkeys/${passkey.id}/rename" class="inline">${csrf}
<label for="passkey-name-${passkey.id}">Name</label>
<input id="passkey-name-${passkey.id}" name="name" type="text" value="${passkey.name}" maxlength="60" required>
<button type="submit" class="secondary">Rename</button>
</form>
<span>${passkey.synced ? 'synced' : 'this device only'}, added ${when(passkey.createdAt)}${passkey.lastUsedAt === null ? null : html`, last used ${when(passkey.lastUsedAt)}`}</span>
<form method="post" action="${base}/passkeys/${passkey.id}/remove" class="inline">${csrf}
<button type="submit" class="secondary" aria-label="Remove ${passkey.name}">Remove</button>
</form>
</li>`,
  );
  const sessions = input.sessions.map(
    (session) =>
      html`<li data-session${session.current ? html`="current"` : null}><strong>${session.device}</strong>${session.current ? html` (this session)` : null}
<br><span class="muted">Signed in ${when(session.createdAt)}${session.ip === null ? null : html` from ${session.ip}`}, last used ${when(session.lastUsedAt ?? session.createdAt)}</span></li>`,
  );
  const accessItems = input.apps.map(
    (
      app,
    ) => html`<li data-app="${app.clientId}"><strong>${app.clientName}</strong>: ${app.scopes.join(', ')}${app.offline ? ' (also while you are away)' : null}
<form method="post" action="${base}/apps/${encodeURIComponent(app.clientId)}/revoke" class="inline">${csrf}
<button type="submit" class="secondary" aria-label="Remove access of ${app.clientName}">Remove access</button>
</form></li>`,
  );
  const body = html`<p class="lead">${input.name ?? input.username}${input.email ? html` · ${input.email}` : null}</p>
${input.notice ? html`<p class="${input.notice.kind === 'ok' ? 'notice' : 'alert'}" role="status" id="account-notice">${input.notice.text}</p>` : null}
${input.email ? renderEmailStatus(input, base, csrf) : null}
<section aria-labelledby="factors-title">
<h2 id="factors-title">Authenticator apps</h2>
${input.authenticatorApps.length === 0 ? html`<p>None yet.</p>` : html`<ul class="factors">${apps}</ul>`}
<form method="post" action="${base}/totp" class="stack">${csrf}
<button type="submit" class="primary">Add an authenticator app</button>
</form>
</section>
<section aria-labelledby="passkeys-title">
<h2 id="passkeys-title">Passkeys</h2>
${input.passkeys.length === 0 ? html`<p>None yet. A passkey signs you in without a password, and cannot be used on another site.</p>` : html`<ul class="factors">${passkeyItems}</ul>`}
<form method="post" action="${base}/passkeys" class="stack">${csrf}
<button type="submit" class="primary">Add a passkey</button>
</form>
</section>
<section aria-labelledby="recovery-title">
<h2 id="recovery-title">Recovery codes</h2>
<p><span id="recovery-remaining" data-remaining="${input.recoveryCodesRemaining}">${input.recoveryCodesRemaining}</span> unused recovery codes.</p>
<form method="post" action="${base}/recovery-codes" class="stack">${csrf}
<button type="submit" class="secondary">Get new recovery codes</button>
</form>
</section>
<section aria-labelledby="password-title">
<h2 id="password-title">Password</h2>
<form method="post" action="${base}/password" class="stack">${csrf}
<div class="field"><label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required></div>
<div class="field"><label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="10" required></div>
<div class="field"><label for="confirm_password">New password again</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="10" required></div>
<button type="submit" class="secondary">Change password</button>
</form>
</section>
<section aria-labelledby="apps-title">
<h2 id="apps-title">Apps with access</h2>
${input.apps.length === 0 ? html`<p>None.</p>` : html`<ul class="apps">${accessItems}</ul>`}
</section>
<section aria-labelledby="sessions-title">
<h2 id="sessions-title">Active sessions</h2>
<ul class="sessions">${sessions}</ul>
<form method="post" action="${base}/sessions/sign-out-others" class="stack">${csrf}
<button type="submit" class="secondary">Sign out other sessions</button>
</form>
</section>`;
  return renderPage({ title: 'Your account', body, basePath: input.basePath });
}

/** Whether the address is verified and, when mail is on and it is not, the button that mails a link. */
function renderEmailStatus(input: AccountPageInput, base: string, csrf: SafeHtml) {
  const verified = input.emailVerified === true;
  return html`<p data-email-verified="${String(verified)}">${verified ? 'Your address is verified.' : 'Your address is not verified yet.'}</p>
${!verified && input.canVerifyEmail ? html`<form method="post" action="${base}/email/verify" class="inline">${csrf}<button type="submit" class="secondary">Send a verification link</button></form>` : null}
${
  input.canVerifyEmail
    ? html`<form method="post" action="${base}/email" class="stack">${csrf}
<div class="field"><label for="new_email">New e-mail address</label>
<input id="new_email" name="email" type="email" autocomplete="email" required></div>
<button type="submit" class="secondary">Change the address</button></form>`
    : null
}`;
}
