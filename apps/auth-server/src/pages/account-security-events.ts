import { AUDIT_EVENTS } from '../audit.js';
import type { MessageKey } from '../i18n/catalogues/en.js';
import { ENGLISH, type Translator } from '../i18n/translator.js';
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
 * account. Other events (consent, token refreshes) are not security events for the person. Each
 * names its message: a catalogue key, worded per language.
 */
export const SECURITY_EVENT_TEXTS: Readonly<Record<string, MessageKey>> = {
  [AUDIT_EVENTS.loginSucceeded]: 'securityEvent.loginSucceeded',
  [AUDIT_EVENTS.loginFailed]: 'securityEvent.loginFailed',
  [AUDIT_EVENTS.factorSucceeded]: 'securityEvent.factorSucceeded',
  [AUDIT_EVENTS.factorFailed]: 'securityEvent.factorFailed',
  [AUDIT_EVENTS.factorEnrolled]: 'securityEvent.factorEnrolled',
  [AUDIT_EVENTS.factorRemoved]: 'securityEvent.factorRemoved',
  [AUDIT_EVENTS.factorRenamed]: 'securityEvent.factorRenamed',
  [AUDIT_EVENTS.recoveryCodesIssued]: 'securityEvent.recoveryCodesIssued',
  [AUDIT_EVENTS.passwordChanged]: 'securityEvent.passwordChanged',
  [AUDIT_EVENTS.passwordChangeFailed]: 'securityEvent.passwordChangeFailed',
  [AUDIT_EVENTS.directoryPasswordChanged]: 'securityEvent.directoryPasswordChanged',
  [AUDIT_EVENTS.otherSessionsEnded]: 'securityEvent.otherSessionsEnded',
  [AUDIT_EVENTS.appAccessRevoked]: 'securityEvent.appAccessRevoked',
  [AUDIT_EVENTS.identityLinked]: 'securityEvent.identityLinked',
  [AUDIT_EVENTS.identityUnlinked]: 'securityEvent.identityUnlinked',
  [AUDIT_EVENTS.logout]: 'securityEvent.logout',
  [AUDIT_EVENTS.adminUserDisabled]: 'securityEvent.adminUserDisabled',
  [AUDIT_EVENTS.adminUserEnabled]: 'securityEvent.adminUserEnabled',
  [AUDIT_EVENTS.adminPasswordReset]: 'securityEvent.adminPasswordReset',
  [AUDIT_EVENTS.adminMfaReset]: 'securityEvent.adminMfaReset',
};

const when = (seconds: number) => {
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;
};

function eventName(event: string, t: Translator): string {
  const key = SECURITY_EVENT_TEXTS[event];
  return key === undefined ? event : t.text(key);
}

/** A list, newest first; a refused attempt is marked in words, not by colour alone. */
export function renderSecurityEventsSection(
  events: readonly AccountSecurityEvent[],
  t: Translator = ENGLISH,
) {
  const items = events.map(
    (item) =>
      html`<li data-security-event="${item.event}"${item.failure ? html` data-failure` : null}><strong>${eventName(item.event, t)}</strong>
<br><span class="muted">${item.ip === null ? when(item.time) : t.html('securityEvents.from', { at: when(item.time), ip: item.ip })}${item.application === null ? null : html` · ${item.application}`}</span></li>`,
  );
  return html`<section aria-labelledby="security-events-title" id="security-events">
<h2 id="security-events-title">${t.text('securityEvents.title')}</h2>
${
  events.length === 0
    ? html`<p class="muted">${t.text('securityEvents.none')}</p>`
    : html`<ul class="sessions">${items}</ul>
<p class="muted">${t.text('securityEvents.advice')}</p>`
}
</section>`;
}
