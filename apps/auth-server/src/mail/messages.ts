import type { MessageKey } from '../i18n/catalogues/en.js';
import { ENGLISH, type Translator } from '../i18n/translator.js';
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
  /** The recipient's language (the one they last used, src/i18n/): `lang` and `dir` of the HTML part. */
  t: Translator;
}

function renderHtml(frame: MailFrame): string {
  const paragraphs = frame.paragraphs.map((text) => html`<p style="margin:0 0 16px">${text}</p>`);
  const action: SafeHtml | null = frame.action
    ? html`<p style="margin:24px 0"><a href="${frame.action.url}" style="background:#1d4ed8;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none;font-weight:600">${frame.action.label}</a></p>`
    : null;
  return html`<!doctype html>
<html lang="${frame.t.language}"${frame.t.direction === 'rtl' ? html` dir="rtl"` : null}><head><meta charset="utf-8"><title>${frame.heading}</title></head>
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

/** Every mail's input: the recipient's language, English when no language is known. */
interface MailLanguage {
  t?: Translator;
}

export function passwordResetMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    link: string;
    minutes: number;
  },
): OutgoingMail {
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  return mailOf('password_reset', input.to, t.text('mail.reset.subject', { site }), {
    t,
    heading: t.text('mail.reset.heading'),
    paragraphs: [
      t.text('mail.reset.asked', { site }),
      t.text('mail.reset.validity', { minutes: input.minutes }),
    ],
    action: { label: t.text('mail.reset.action'), url: input.link },
    footer: t.text('mail.reset.footer'),
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
  { subject: MessageKey; heading: MessageKey; what: MessageKey }
> = {
  factor_added: {
    subject: 'mail.factorAdded.subject',
    heading: 'mail.factorAdded.heading',
    what: 'mail.factorAdded.what',
  },
  factor_removed: {
    subject: 'mail.factorRemoved.subject',
    heading: 'mail.factorRemoved.heading',
    what: 'mail.factorRemoved.what',
  },
  recovery_code_used: {
    subject: 'mail.recoveryCodeUsed.subject',
    heading: 'mail.recoveryCodeUsed.heading',
    what: 'mail.recoveryCodeUsed.what',
  },
  identity_linked: {
    subject: 'mail.identityLinked.subject',
    heading: 'mail.identityLinked.heading',
    what: 'mail.identityLinked.what',
  },
  identity_unlinked: {
    subject: 'mail.identityUnlinked.subject',
    heading: 'mail.identityUnlinked.heading',
    what: 'mail.identityUnlinked.what',
  },
};

/** A notice of a change to the account's sign-in methods: what, when, from where, what to do. */
export function securityNoticeMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    kind: SecurityNoticeKind;
    context: ChangeContext;
    /** The upstream provider's display name, for `identity_linked` / `identity_unlinked`. */
    service?: string;
  },
): OutgoingMail {
  if (input.kind === 'password_changed') return passwordChangedMail(input);
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  const notice = NOTICES[input.kind];
  const what = t.text(notice.what, { service: input.service ?? t.text('mail.anotherService') });
  const { at, device, ip } = input.context;
  const subject = t.text('mail.notice.subjectAt', { subject: t.text(notice.subject), site });
  return mailOf('security_notice', input.to, subject, {
    t,
    heading: t.text(notice.heading),
    paragraphs: [t.text('mail.notice.happened', { what, site, at: t.dateTime(at), device, ip })],
    footer: t.text('mail.notice.footer', { site }),
  });
}

export function passwordChangedMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    context: ChangeContext;
  },
): OutgoingMail {
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  const { at, device, ip } = input.context;
  return mailOf('password_changed', input.to, t.text('mail.passwordChanged.subject', { site }), {
    t,
    heading: t.text('mail.passwordChanged.heading'),
    paragraphs: [
      t.text('mail.passwordChanged.what', { site, at: t.dateTime(at), device, ip }),
      t.text('mail.passwordChanged.ended'),
    ],
    footer: t.text('mail.passwordChanged.footer', { site }),
  });
}

export function emailVerificationMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    link: string;
    hours: number;
  },
): OutgoingMail {
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  return mailOf('email_verification', input.to, t.text('mail.verify.subject', { site }), {
    t,
    heading: t.text('mail.verify.heading'),
    paragraphs: [
      t.text('mail.verify.asked', { site }),
      t.text('mail.verify.validity', { hours: input.hours }),
    ],
    action: { label: t.text('mail.verify.action'), url: input.link },
    footer: t.text('mail.ignore'),
  });
}

export function emailChangeConfirmationMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    link: string;
  },
): OutgoingMail {
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  return mailOf('email_change', input.to, t.text('mail.change.subject', { site }), {
    t,
    heading: t.text('mail.change.heading'),
    paragraphs: [t.text('mail.change.asked', { site }), t.text('mail.change.validity')],
    action: { label: t.text('mail.change.action'), url: input.link },
    footer: t.text('mail.ignore'),
  });
}

export function emailChangeNoticeMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    newAddress: string;
    link: string;
    context: ChangeContext;
  },
): OutgoingMail {
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  const { at, device, ip } = input.context;
  return mailOf('security_notice', input.to, t.text('mail.changeNotice.subject', { site }), {
    t,
    heading: t.text('mail.changeNotice.heading'),
    paragraphs: [
      t.text('mail.changeNotice.what', {
        at: t.dateTime(at),
        device,
        ip,
        site,
        newAddress: input.newAddress,
      }),
    ],
    action: { label: t.text('mail.changeNotice.action'), url: input.link },
    footer: t.text('mail.changeNotice.footer'),
  });
}

export function upstreamLinkMail(
  input: MailLanguage & {
    issuer: string;
    to: string;
    providerName: string;
    link: string;
    minutes: number;
  },
): OutgoingMail {
  const { t = ENGLISH } = input;
  const site = issuerName(input.issuer);
  const provider = input.providerName;
  return mailOf('upstream_link', input.to, t.text('mail.link.subject', { provider, site }), {
    t,
    heading: t.text('mail.link.heading', { provider }),
    paragraphs: [
      t.text('mail.link.asked', { site, provider }),
      t.text('mail.link.validity', { minutes: input.minutes }),
    ],
    action: { label: t.text('mail.link.action', { provider }), url: input.link },
    footer: t.text('mail.link.footer'),
  });
}
