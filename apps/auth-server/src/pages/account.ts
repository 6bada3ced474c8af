import { ENGLISH_PAGE, type PageLanguage, type Translator } from '../i18n/translator.js';
import { type AccountSecurityEvent, renderSecurityEventsSection } from './account-security-events.js';
import { html, type SafeHtml } from './html.js';
import { renderPage } from './layout.js';
import { describeScope } from './scope-descriptions.js';

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
    /** The session id (`sid`, not a secret: the cookie holds another key); names the one to end. */
    id: string;
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
  /** Upstream OpenID providers linked to the account (README "Upstream identity providers"). */
  linkedProviders?: ReadonlyArray<{ providerId: string; displayName: string; lastSignInAt: number | null }>;
  /** Enabled upstream providers not linked yet: a "Link <name>" form each (a recent sign-in is asked first). */
  linkableProviders?: ReadonlyArray<{ id: string; displayName: string }>;
  /** The person's own recent security events, newest first (./account-security-events.ts). */
  securityEvents?: readonly AccountSecurityEvent[];
  /**
   * A short confirmation or error after a change. An error naming a `form` of this page is shown
   * inside that form (with `kept`, the name typed, back in its field); anything else at the top.
   */
  notice?: { kind: 'ok' | 'error'; text: string; form?: string; kept?: string };
  /** The application the person came from (a registered client's home). */
  back?: { href: string; label: string } | undefined;
  /** The end-session form: signs out here and, with a client, continues to its post-logout URI. */
  signOut: {
    action: string;
    csrfToken: string;
    clientId?: string | undefined;
    postLogoutRedirectUri?: string | undefined;
  };
  basePath: string;
  /** The page's language and switcher; English without one when absent. */
  language?: PageLanguage;
}

const wordsOf = (input: AccountPageInput): Translator => (input.language ?? ENGLISH_PAGE).t;

/** A time with its zone, machine-readable too ("2026-11-26 15:04 UTC"). */
const when = (seconds: number) => {
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;
};

/** The same time as `when`, as text for an attribute. */
const utcMinute = (seconds: number) => new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 16);

function passkeyDates(t: Translator, passkey: AccountPageInput['passkeys'][number]) {
  const synced = passkey.synced ? 'yes' : 'no';
  return passkey.lastUsedAt === null
    ? t.html('account.passkeyAdded', { synced, added: when(passkey.createdAt) })
    : t.html('account.passkeyAddedLastUsed', {
        synced,
        added: when(passkey.createdAt),
        lastUsed: when(passkey.lastUsedAt),
      });
}

function sessionDates(t: Translator, session: AccountPageInput['sessions'][number]) {
  const dates = { at: when(session.createdAt), lastUsed: when(session.lastUsedAt ?? session.createdAt) };
  return session.ip === null
    ? t.html('account.sessionSignedIn', dates)
    : t.html('account.sessionSignedInFrom', { ...dates, ip: session.ip });
}

/** The notice when it belongs to `form`, else nothing. */
interface FormNotice {
  /** The error's paragraph, placed first in the form; empty when the form has none. */
  message: SafeHtml | null;
  /** Attributes of the form's first field: invalid, described by the message, focused. */
  fieldAttributes: SafeHtml | null;
  /** The typed name to put back (a rename that failed). */
  kept: string | undefined;
}

const NO_NOTICE: FormNotice = { message: null, fieldAttributes: null, kept: undefined };

function noticeFor(input: AccountPageInput, form: string): FormNotice {
  const notice = input.notice;
  if (notice?.kind !== 'error' || notice.form !== form) return NO_NOTICE;
  const id = `error-${form}`;
  return {
    message: html`<p class="alert" role="alert" id="${id}">${notice.text}</p>`,
    fieldAttributes: html` aria-invalid="true" aria-describedby="${id}" autofocus`,
    kept: notice.kept,
  };
}

/** Every form key this page renders, so an error for a form that is gone shows at the top. */
function formKeysOf(input: AccountPageInput): Set<string> {
  return new Set([
    'password',
    ...(input.email && input.canVerifyEmail ? ['email'] : []),
    ...input.authenticatorApps.map((app) => `totp-${app.id}`),
    ...input.passkeys.map((passkey) => `passkeys-${passkey.id}`),
    ...input.apps.map((app) => `apps-${app.clientId}`),
    ...input.sessions.filter((session) => !session.current).map((session) => `sessions-${session.id}`),
  ]);
}

/**
 * "Remove" asks first without any script: a disclosure whose summary reads "Remove…" and whose
 * content is the form that really removes (WAI-ARIA APG disclosure pattern, native `<details>`).
 */
function confirmRemoval(
  t: Translator,
  action: string,
  csrf: SafeHtml,
  question: string,
  confirmLabel: string,
  notice: FormNotice,
) {
  return html`<details class="confirm"${notice.message ? html` open` : null}>
<summary>${t.text('account.remove')}</summary>
<form method="post" action="${action}" class="confirm-form">${csrf}
${notice.message}
<p>${question}</p>
<button type="submit" class="danger"${notice.message ? html` autofocus` : null}>${confirmLabel}</button>
</form>
</details>`;
}

/**
 * The account page (/account): every change is a `<form method="post">` with the CSRF token, each
 * control labelled, headings in order, so it works by keyboard and screen reader. Every form answers
 * with a redirect back here (post/redirect/get); an error shows inside the form it belongs to.
 */
export function renderAccountPage(input: AccountPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const csrf = html`<input type="hidden" name="csrf" value="${input.csrfToken}">`;
  const keys = formKeysOf(input);
  const notice = input.notice;
  const atTop = notice !== undefined && (notice.kind === 'ok' || !keys.has(notice.form ?? ''));
  const body = html`<p class="lead">${input.name ?? input.username}${input.email ? html` · ${input.email}` : null}</p>
${renderNavigation(input)}
${atTop ? html`<p class="${notice.kind === 'ok' ? 'notice' : 'alert'}" role="${notice.kind === 'ok' ? 'status' : 'alert'}" id="account-notice">${notice.text}</p>` : null}
${input.email ? renderEmailStatus(input, `${input.basePath}/account`, csrf) : null}
${renderFactorSections(input, csrf)}
<section aria-labelledby="recovery-title">
<h2 id="recovery-title">${t.text('account.recoveryTitle')}</h2>
<p>${t.html('account.recoveryRemaining', { count: input.recoveryCodesRemaining, remaining: () => html`<span id="recovery-remaining" data-remaining="${input.recoveryCodesRemaining}">${input.recoveryCodesRemaining}</span>` })}</p>
<form method="post" action="${input.basePath}/account/recovery-codes" class="stack">${csrf}
<button type="submit" class="secondary">${t.text('account.recoveryNew')}</button>
</form>
</section>
${renderPasswordSection(input, csrf)}
${renderAppsSection(input, csrf)}
${renderLinkedProviders(input, csrf)}
${renderSessionsSection(input, csrf)}
${input.securityEvents === undefined ? null : renderSecurityEventsSection(input.securityEvents, t)}`;
  return renderPage({ title: t.text('account.title'), body, basePath: input.basePath, language });
}

/** Linked sign-in services, each with an unlink form (refused when it is the last way in), and the ones to link. */
function renderLinkedProviders(input: AccountPageInput, csrf: SafeHtml) {
  const linked = input.linkedProviders ?? [];
  const linkable = input.linkableProviders ?? [];
  const t = wordsOf(input);
  if (linked.length === 0 && linkable.length === 0) return null;
  return html`<section aria-labelledby="providers-title">
<h2 id="providers-title">${t.text('account.providersTitle')}</h2>
${
  linked.length === 0
    ? html`<p>${t.text('account.providersNone')}</p>`
    : html`<ul class="stack">${linked.map(
        (
          provider,
        ) => html`<li data-linked-provider="${provider.providerId}">${provider.displayName}${provider.lastSignInAt === null ? null : html` · ${t.html('account.providerLastUsed', { at: when(provider.lastSignInAt) })}`}
<form method="post" action="${input.basePath}/account/providers/${provider.providerId}/unlink" class="inline">${csrf}
<button type="submit" class="secondary" data-action="unlink-provider" aria-label="${t.text('account.unlinkLabel', { provider: provider.displayName })}">${t.text('account.unlink')}</button>
</form></li>`,
      )}</ul>`
}
${
  linkable.length === 0
    ? null
    : html`<div class="stack">${linkable.map(
        (
          provider,
        ) => html`<form method="post" action="${input.basePath}/account/providers/${provider.id}/link" class="stack">${csrf}
<button type="submit" class="secondary" data-action="link-provider" data-provider="${provider.id}">${t.text('account.link', { provider: provider.displayName })}</button>
</form>`,
      )}</div>`
}
</section>`;
}

/** "Back to <app>" (when the person came from one) and "Sign out" (the end-session endpoint). */
function renderNavigation(input: AccountPageInput) {
  const { signOut } = input;
  const t = wordsOf(input);
  const returnFields =
    signOut.clientId && signOut.postLogoutRedirectUri
      ? html`<input type="hidden" name="client_id" value="${signOut.clientId}">
<input type="hidden" name="post_logout_redirect_uri" value="${signOut.postLogoutRedirectUri}">`
      : null;
  return html`<nav class="account-nav" aria-label="${t.text('account.nav')}">
${input.back ? html`<a href="${input.back.href}" data-action="back-to-app">${input.back.label}</a>` : null}
<form method="post" action="${signOut.action}" class="inline">
<input type="hidden" name="csrf" value="${signOut.csrfToken}">
<input type="hidden" name="confirm" value="yes">
${returnFields}
<button type="submit" class="secondary" data-action="sign-out">${t.text('account.signOut')}</button>
</form>
</nav>`;
}

function renderFactorSections(input: AccountPageInput, csrf: SafeHtml) {
  const base = `${input.basePath}/account`;
  const t = wordsOf(input);
  const apps = input.authenticatorApps.map((app) => {
    const notice = noticeFor(input, `totp-${app.id}`);
    return html`<li data-factor="${app.id}" id="totp-${app.id}">
<form method="post" action="${base}/totp/${app.id}/rename" class="inline">${csrf}
${notice.message}
<label for="name-${app.id}">${t.text('account.name')}</label>
<input id="name-${app.id}" name="name" type="text" value="${notice.kept ?? app.name}" maxlength="60" required${notice.fieldAttributes}>
<button type="submit" class="secondary">${t.text('account.rename')}</button>
</form>
<span>${app.lastUsedAt === null ? t.html('account.added', { added: when(app.createdAt) }) : t.html('account.addedLastUsed', { added: when(app.createdAt), lastUsed: when(app.lastUsedAt) })}</span>
${confirmRemoval(t, `${base}/totp/${app.id}/remove`, csrf, t.text('account.removeAuthenticator', { name: app.name }), t.text('account.removeConfirm', { name: app.name }), NO_NOTICE)}
</li>`;
  });
  const passkeyItems = input.passkeys.map((passkey) => {
    const notice = noticeFor(input, `passkeys-${passkey.id}`);
    return html`<li data-passkey="${passkey.id}" id="passkeys-${passkey.id}">
<form method="post" action="${base}/passkeys/${passkey.id}/rename" class="inline">${csrf}
${notice.message}
<label for="passkey-name-${passkey.id}">${t.text('account.name')}</label>
<input id="passkey-name-${passkey.id}" name="name" type="text" value="${notice.kept ?? passkey.name}" maxlength="60" required${notice.fieldAttributes}>
<button type="submit" class="secondary">${t.text('account.rename')}</button>
</form>
<span>${passkeyDates(t, passkey)}</span>
${confirmRemoval(t, `${base}/passkeys/${passkey.id}/remove`, csrf, t.text('account.removePasskey', { name: passkey.name }), t.text('account.removeConfirm', { name: passkey.name }), NO_NOTICE)}
</li>`;
  });
  return html`<section aria-labelledby="factors-title">
<h2 id="factors-title">${t.text('account.factorsTitle')}</h2>
${input.authenticatorApps.length === 0 ? html`<p>${t.text('account.noneYet')}</p>` : html`<ul class="factors">${apps}</ul>`}
<form method="post" action="${base}/totp" class="stack">${csrf}
<button type="submit" class="primary">${t.text('account.addAuthenticator')}</button>
</form>
</section>
<section aria-labelledby="passkeys-title">
<h2 id="passkeys-title">${t.text('account.passkeysTitle')}</h2>
${input.passkeys.length === 0 ? html`<p>${t.text('account.passkeysNone')}</p>` : html`<ul class="factors">${passkeyItems}</ul>`}
<form method="post" action="${base}/passkeys" class="stack">${csrf}
<button type="submit" class="primary">${t.text('account.addPasskey')}</button>
</form>
</section>`;
}

function renderPasswordSection(input: AccountPageInput, csrf: SafeHtml) {
  // Passwords are never put back after an error; the person types both again from the first.
  const notice = noticeFor(input, 'password');
  const t = wordsOf(input);
  return html`<section aria-labelledby="password-title" id="password">
<h2 id="password-title">${t.text('account.passwordTitle')}</h2>
<form method="post" action="${input.basePath}/account/password" class="stack">${csrf}
${notice.message}
<div class="field"><label for="current_password">${t.text('account.currentPassword')}</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required${notice.fieldAttributes}></div>
<div class="field"><label for="new_password">${t.text('account.newPassword')}</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="10" required></div>
<div class="field"><label for="confirm_password">${t.text('account.newPasswordAgain')}</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="10" required></div>
<button type="submit" class="secondary">${t.text('account.changePassword')}</button>
</form>
</section>`;
}

function renderAppsSection(input: AccountPageInput, csrf: SafeHtml) {
  const base = `${input.basePath}/account`;
  const t = wordsOf(input);
  const items = input.apps.map(
    (
      app,
    ) => html`<li data-app="${app.clientId}" id="apps-${app.clientId}">${t.html('account.appCan', { app: app.clientName })}
<ul class="scopes">${app.scopes.map((scope) => html`<li>${describeScope(scope, t)}</li>`)}${app.offline && !app.scopes.includes('offline_access') ? html`<li>${t.text('account.keepAccessAway')}</li>` : null}</ul>
${confirmRemoval(t, `${base}/apps/${encodeURIComponent(app.clientId)}/revoke`, csrf, t.text('account.revokeQuestion', { app: app.clientName }), t.text('account.revokeConfirm', { app: app.clientName }), noticeFor(input, `apps-${app.clientId}`))}
</li>`,
  );
  return html`<section aria-labelledby="apps-title">
<h2 id="apps-title">${t.text('account.appsTitle')}</h2>
${input.apps.length === 0 ? html`<p>${t.text('account.none')}</p>` : html`<ul class="apps">${items}</ul>`}
</section>`;
}

function renderSessionsSection(input: AccountPageInput, csrf: SafeHtml) {
  const base = `${input.basePath}/account`;
  const t = wordsOf(input);
  const items = input.sessions.map((session) => {
    const notice = noticeFor(input, `sessions-${session.id}`);
    const end = session.current
      ? null
      : html`<form method="post" action="${base}/sessions/${encodeURIComponent(session.id)}/end" class="inline">${csrf}
${notice.message}
<button type="submit" class="secondary" aria-label="${t.text('account.signOutSession', { device: session.device, at: `${utcMinute(session.createdAt)} UTC` })}"${notice.fieldAttributes === null ? null : html` autofocus`}>${t.text('account.signOut')}</button>
</form>`;
    return html`<li data-session${session.current ? html`="current"` : null} id="sessions-${session.id}"><strong>${session.device}</strong>${session.current ? html` ${t.text('account.thisSession')}` : null}
<br><span class="muted">${sessionDates(t, session)}</span>
${end}</li>`;
  });
  return html`<section aria-labelledby="sessions-title">
<h2 id="sessions-title">${t.text('account.sessionsTitle')}</h2>
<ul class="sessions">${items}</ul>
<form method="post" action="${base}/sessions/sign-out-others" class="stack">${csrf}
<button type="submit" class="secondary">${t.text('account.signOutOthers')}</button>
</form>
</section>`;
}

/** Whether the address is verified and, when mail is on and it is not, the button that mails a link. */
function renderEmailStatus(input: AccountPageInput, base: string, csrf: SafeHtml) {
  const verified = input.emailVerified === true;
  const notice = noticeFor(input, 'email');
  const t = wordsOf(input);
  return html`<section aria-labelledby="email-title">
<h2 id="email-title">${t.text('account.emailTitle')}</h2>
<p data-email-verified="${String(verified)}">${t.text(verified ? 'account.emailVerified' : 'account.emailNotVerified')}</p>
${!verified && input.canVerifyEmail ? html`<form method="post" action="${base}/email/verify" class="inline">${csrf}<button type="submit" class="secondary">${t.text('account.sendVerification')}</button></form>` : null}
${
  input.canVerifyEmail
    ? html`<form method="post" action="${base}/email" class="stack">${csrf}
${notice.message}
<p id="email-change-help" data-email-change="help">${t.text('account.emailChangeHelp')}</p>
<div class="field"><label for="new_email">${t.text('account.newEmail')}</label>
<input id="new_email" name="email" type="email" autocomplete="email"${notice.kept === undefined ? null : html` value="${notice.kept}"`} required${notice.fieldAttributes}></div>
<button type="submit" class="secondary">${t.text('account.changeEmail')}</button></form>`
    : null
}
</section>`;
}
