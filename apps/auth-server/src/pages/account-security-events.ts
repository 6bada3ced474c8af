import { AUDIT_EVENTS } from '../audit.js';
import { html } from './html.js';

/** One line of the account page's "Recent security events". */
export interface AccountSecurityEvent {
  /** Seconds since the epoch. */
  time: number;
  /** An AUDIT_EVENTS value named in SECURITY_EVENT_TEXTS. */
  event: string;
  ip: string | null;
  /** The application it happened in, when one did (its name, else its client_id). */
  application: string | null;
  failure: boolean;
}

/**
 * The events a person sees about their own account, and how each reads: sign-ins and their
 * failures, factors, password, sessions, linked services, and what an administrator did to the
 * account. Other events (consent, token refreshes) are not security events for the person.
 */
export const SECURITY_EVENT_TEXTS: Readonly<Record<string, string>> = {
  [AUDIT_EVENTS.loginSucceeded]: 'Signed in',
  [AUDIT_EVENTS.loginFailed]: 'Sign-in refused',
  [AUDIT_EVENTS.factorSucceeded]: 'Second step of sign-in passed',
  [AUDIT_EVENTS.factorFailed]: 'Second step of sign-in refused',
  [AUDIT_EVENTS.factorEnrolled]: 'Second factor added',
  [AUDIT_EVENTS.factorRemoved]: 'Second factor removed',
  [AUDIT_EVENTS.factorRenamed]: 'Second factor renamed',
  [AUDIT_EVENTS.recoveryCodesIssued]: 'New recovery codes issued',
  [AUDIT_EVENTS.passwordChanged]: 'Password changed',
  [AUDIT_EVENTS.passwordChangeFailed]: 'Password change refused',
  [AUDIT_EVENTS.directoryPasswordChanged]: 'Directory password changed',
  [AUDIT_EVENTS.otherSessionsEnded]: 'Other sessions signed out',
  [AUDIT_EVENTS.appAccessRevoked]: 'Access of an application removed',
  [AUDIT_EVENTS.identityLinked]: 'Sign-in service linked',
  [AUDIT_EVENTS.identityUnlinked]: 'Sign-in service unlinked',
  [AUDIT_EVENTS.logout]: 'Signed out',
  [AUDIT_EVENTS.adminUserDisabled]: 'Account disabled by an administrator',
  [AUDIT_EVENTS.adminUserEnabled]: 'Account enabled by an administrator',
  [AUDIT_EVENTS.adminPasswordReset]: 'Password reset by an administrator',
  [AUDIT_EVENTS.adminMfaReset]: 'Second factors removed by an administrator',
};

const when = (seconds: number) => {
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;
};

/** A list, newest first; a refused attempt is marked in words, not by colour alone. */
export function renderSecurityEventsSection(events: readonly AccountSecurityEvent[]) {
  const items = events.map(
    (item) =>
      html`<li data-security-event="${item.event}"${item.failure ? html` data-failure` : null}><strong>${SECURITY_EVENT_TEXTS[item.event] ?? item.event}</strong>
<br><span class="muted">${when(item.time)}${item.ip === null ? null : html` from ${item.ip}`}${item.application === null ? null : html` · ${item.application}`}</span></li>`,
  );
  return html`<section aria-labelledby="security-events-title" id="security-events">
<h2 id="security-events-title">Recent security events</h2>
${
  events.length === 0
    ? html`<p class="muted">No security events recorded yet.</p>`
    : html`<ul class="sessions">${items}</ul>
<p class="muted">If you do not recognise one, change your password and sign out your other sessions.</p>`
}
</section>`;
}
