import { html, type SafeHtml } from '../pages/html.js';
import type { OutgoingMail } from './mailer.js';

/**
 * The mails' text and HTML parts. The HTML carries its style inline (mail readers load no
 * stylesheet) and nothing from elsewhere: no image, font or tracking pixel. Links are built by the
 * caller from ISSUER only, never from the request's Host or forwarded headers.
 */

/** What a person recognises in a subject: the issuer's host (`login.example.com`). */
export function issuerName(issuer: string): string {
  return new URL(issuer).host;
}

interface MailFrame {
  heading: string;
  paragraphs: readonly string[];
  /** The one action of the mail, a button in HTML and the bare URL in the text part. */
  action?: { label: string; url: string };
  footer: string;
}

function renderHtml(frame: MailFrame): string {
  const paragraphs = frame.paragraphs.map((text) => html`<p style="margin:0 0 16px">${text}</p>`);
  const action: SafeHtml | null = frame.action
    ? html`<p style="margin:24px 0"><a href="${frame.action.url}" style="background:#1d4ed8;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none;font-weight:600">${frame.action.label}</a></p>`
    : null;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${frame.heading}</title></head>
<body style="margin:0;padding:24px;background:#f3f4f6;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#111827">
<div style="max-width:32rem;margin:0 auto;background:#ffffff;border-radius:12px;padding:32px;border:1px solid #e5e7eb">
<h1 style="font-size:1.4rem;margin:0 0 16px">${frame.heading}</h1>
${paragraphs}${action}
<p style="margin:24px 0 0;font-size:0.9rem;color:#4b5563">${frame.footer}</p>
</div></body></html>
`.value;
}

function renderText(frame: MailFrame): string {
  const action = frame.action ? [`${frame.action.label}:`, frame.action.url, ''] : [];
  return [
    frame.heading,
    '',
    ...frame.paragraphs.flatMap((text) => [text, '']),
    ...action,
    frame.footer,
    '',
  ].join('\n');
}

function mailOf(
  purpose: OutgoingMail['purpose'],
  to: string,
  subject: string,
  frame: MailFrame,
): OutgoingMail {
  return { purpose, to, subject, text: renderText(frame), html: renderHtml(frame) };
}

export function passwordResetMail(input: {
  issuer: string;
  to: string;
  link: string;
  minutes: number;
}): OutgoingMail {
  const name = issuerName(input.issuer);
  return mailOf('password_reset', input.to, `Reset your password for ${name}`, {
    heading: 'Reset your password',
    paragraphs: [
      `Someone asked to reset the password of the account with this address at ${name}.`,
      `The link below works once, for ${input.minutes} minutes. Opening it changes nothing until you choose a new password on the page.`,
    ],
    action: { label: 'Choose a new password', url: input.link },
    footer: 'If you did not ask for this, ignore this mail: your password stays as it is.',
  });
}

/** Where and when a change happened, as the account page's sessions list names it. */
export interface ChangeContext {
  at: Date;
  device: string;
  ip: string;
}

/** What a security notice reports (README "Email"). */
export type SecurityNoticeKind =
  | 'password_changed'
  | 'factor_added'
  | 'factor_removed'
  | 'recovery_code_used'
  | 'identity_linked'
  | 'identity_unlinked';

/** `what` of a notice: `service` names the upstream provider of a link or unlink. */
const NOTICES: Record<
  Exclude<SecurityNoticeKind, 'password_changed'>,
  { subject: string; heading: string; what: string | ((service: string) => string) }
> = {
  factor_added: {
    subject: 'A sign-in method was added to your account',
    heading: 'A sign-in method was added',
    what: 'A passkey or authenticator app was added to your account',
  },
  factor_removed: {
    subject: 'A sign-in method was removed from your account',
    heading: 'A sign-in method was removed',
    what: 'A passkey or authenticator app was removed from your account',
  },
  recovery_code_used: {
    subject: 'A recovery code of your account was used',
    heading: 'A recovery code was used',
    what: 'One of your recovery codes was used to sign in to your account',
  },
  identity_linked: {
    subject: 'A sign-in service was linked to your account',
    heading: 'A sign-in service was linked',
    what: (service) => `Signing in with ${service} was linked to your account`,
  },
  identity_unlinked: {
    subject: 'A sign-in service was unlinked from your account',
    heading: 'A sign-in service was unlinked',
    what: (service) => `Signing in with ${service} was unlinked from your account`,
  },
};

/** A notice of a change to the account's sign-in methods: what, when, from where, what to do. */
export function securityNoticeMail(input: {
  issuer: string;
  to: string;
  kind: SecurityNoticeKind;
  context: ChangeContext;
  /** The upstream provider's display name, for `identity_linked` / `identity_unlinked`. */
  service?: string;
}): OutgoingMail {
  if (input.kind === 'password_changed') return passwordChangedMail(input);
  const name = issuerName(input.issuer);
  const notice = NOTICES[input.kind];
  const what =
    typeof notice.what === 'string' ? notice.what : notice.what(input.service ?? 'another service');
  const { at, device, ip } = input.context;
  return mailOf('security_notice', input.to, `${notice.subject} at ${name}`, {
    heading: notice.heading,
    paragraphs: [`${what} at ${name} on ${at.toUTCString()}, from ${device} (address ${ip}).`],
    footer: `If this was not you, change your password at once on the account page of ${name} (or with "Forgot your password?" on its sign-in page), check your sign-in methods, and tell your administrator.`,
  });
}

export function passwordChangedMail(input: {
  issuer: string;
  to: string;
  context: ChangeContext;
}): OutgoingMail {
  const name = issuerName(input.issuer);
  const { at, device, ip } = input.context;
  return mailOf('password_changed', input.to, `Your password for ${name} was changed`, {
    heading: 'Your password was changed',
    paragraphs: [
      `The password of your account at ${name} was changed on ${at.toUTCString()} from ${device} (address ${ip}).`,
      'Every session and app sign-in of the account was ended; sign in again with the new password.',
    ],
    footer: `If this was not you, reset your password at once with "Forgot your password?" on the sign-in page of ${name}, and tell your administrator.`,
  });
}

export function emailVerificationMail(input: {
  issuer: string;
  to: string;
  link: string;
  hours: number;
}): OutgoingMail {
  const name = issuerName(input.issuer);
  return mailOf('email_verification', input.to, `Confirm your address for ${name}`, {
    heading: 'Confirm your address',
    paragraphs: [
      `Someone asked ${name} to confirm that this address belongs to their account.`,
      `The link below works once, for ${input.hours} hours. Opening it changes nothing until you press the button on the page.`,
    ],
    action: { label: 'Confirm this address', url: input.link },
    footer: 'If you did not ask for this, ignore this mail.',
  });
}

export function emailChangeConfirmationMail(input: {
  issuer: string;
  to: string;
  link: string;
}): OutgoingMail {
  const name = issuerName(input.issuer);
  return mailOf('email_change', input.to, `Confirm your new address for ${name}`, {
    heading: 'Confirm your new address',
    paragraphs: [
      `Someone asked ${name} to use this address for their account. Until it is confirmed, the account keeps its old address.`,
      'The link below works once, for 24 hours. Opening it changes nothing until you press the button on the page.',
    ],
    action: { label: 'Use this address', url: input.link },
    footer: 'If you did not ask for this, ignore this mail.',
  });
}

export function emailChangeNoticeMail(input: {
  issuer: string;
  to: string;
  newAddress: string;
  link: string;
  context: ChangeContext;
}): OutgoingMail {
  const name = issuerName(input.issuer);
  const { at, device, ip } = input.context;
  return mailOf('security_notice', input.to, `The address of your account at ${name} is being changed`, {
    heading: 'Your address is being changed',
    paragraphs: [
      `On ${at.toUTCString()}, from ${device} (address ${ip}), your account at ${name} asked to use ${input.newAddress} instead of this address. The change happens once the new address is confirmed.`,
    ],
    action: { label: 'This was not me: undo it and sign out everywhere', url: input.link },
    footer: 'The link works once, for 7 days. If this was you, there is nothing to do.',
  });
}

export function upstreamLinkMail(input: {
  issuer: string;
  to: string;
  providerName: string;
  link: string;
  minutes: number;
}): OutgoingMail {
  const name = issuerName(input.issuer);
  return mailOf('upstream_link', input.to, `Link ${input.providerName} to your account at ${name}`, {
    heading: `Use ${input.providerName} to sign in`,
    paragraphs: [
      `Someone signing in to ${name} with ${input.providerName} asked to link that sign-in to the account with this address.`,
      `The link below works once, for ${input.minutes} minutes, and only in the browser where that sign-in started. Opening it changes nothing until you press the button on the page.`,
    ],
    action: { label: `Link ${input.providerName} and sign in`, url: input.link },
    footer: 'If you did not ask for this, ignore this mail: nothing is linked without it.',
  });
}
