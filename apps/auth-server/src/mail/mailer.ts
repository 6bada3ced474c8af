import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { MailConfig } from '../config.js';
import { mailsSent } from '../metrics.js';

/** What a mail is for; a label of the mail counter, so the list is fixed. */
export type MailPurpose =
  | 'password_reset'
  | 'password_changed'
  | 'security_notice'
  | 'email_verification'
  | 'email_change'
  | 'upstream_link';

export interface OutgoingMail {
  purpose: MailPurpose;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** `reason` is for the log only: an error code and the SMTP reply code, never the message's content. */
export type MailOutcome = { sent: true } | { sent: false; reason: string };

export interface Mailer {
  readonly transport: MailConfig['transport'];
  /** Never throws and never takes longer than `sendDeadlineMs`. */
  send(mail: OutgoingMail): Promise<MailOutcome>;
  close(): Promise<void>;
}

/**
 * Timeouts of one SMTP exchange, and the deadline of a whole send with its retries: a page that
 * sends a mail answers within a few seconds whatever the SMTP server does (it may stall).
 */
export interface SmtpTimings {
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  sendDeadlineMs: number;
  /** Attempts of one send (the first and the retries), and the pause before the n-th retry × n. */
  attempts: number;
  retryBackoffMs: number;
}

export const DEFAULT_SMTP_TIMINGS: SmtpTimings = {
  connectionTimeoutMs: 2_000,
  greetingTimeoutMs: 2_000,
  socketTimeoutMs: 3_000,
  sendDeadlineMs: 4_000,
  attempts: 3,
  retryBackoffMs: 250,
};

/** Errors worth another attempt: the connection, a timeout, or a 4xx "try again later" reply (RFC 5321 §4.2.1). */
function isTransient(error: { code?: string; responseCode?: number }): boolean {
  if (error.responseCode !== undefined) return error.responseCode >= 400 && error.responseCode < 500;
  return ['ETIMEDOUT', 'ESOCKET', 'ECONNECTION', 'EDNS'].includes(error.code ?? '');
}

function reasonOf(error: unknown): string {
  const { code, responseCode } = (error ?? {}) as { code?: string; responseCode?: number };
  return [code ?? 'error', responseCode].filter((part) => part !== undefined).join(' ');
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Resolves with `fallback` when `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Counts and logs an outcome: the purpose and why, never the recipient, link or token. */
function record(log: FastifyBaseLogger, mail: OutgoingMail, outcome: MailOutcome): MailOutcome {
  mailsSent.inc({ purpose: mail.purpose, outcome: outcome.sent ? 'sent' : 'failed' });
  if (outcome.sent) log.info({ purpose: mail.purpose }, 'mail sent');
  else log.warn({ purpose: mail.purpose, reason: outcome.reason }, 'mail could not be sent');
  return outcome;
}

/**
 * Host, port, TLS mode and credentials of SMTP_URL. Parsed here rather than by nodemailer's `url`
 * option, whose URL settings would replace the `tls` options (the private CA) given beside it.
 */
function smtpEndpoint(value: string) {
  const url = new URL(value);
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    // Without a port: 465 for smtps:// (RFC 8314 §3.3), 587 for submission with STARTTLS (RFC 6409).
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(url.username === ''
      ? {}
      : { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }),
  };
}

/**
 * SMTP through nodemailer, loaded only when SMTP_URL is set. STARTTLS whenever the server offers
 * it and `smtps://` for implicit TLS (RFC 8314 §3.3), the certificate always checked (a private CA
 * through SMTP_CA_FILE, never by turning the check off); a small pool of reused connections.
 */
export async function createSmtpMailer(
  config: Extract<MailConfig, { transport: 'smtp' }>,
  log: FastifyBaseLogger,
  timings: SmtpTimings = DEFAULT_SMTP_TIMINGS,
): Promise<Mailer> {
  const { createTransport } = await import('nodemailer');
  const ca = config.caFile === undefined ? undefined : await readFile(config.caFile, 'utf8');
  const transport = createTransport({
    ...smtpEndpoint(config.url),
    pool: true,
    maxConnections: 2,
    connectionTimeout: timings.connectionTimeoutMs,
    greetingTimeout: timings.greetingTimeoutMs,
    socketTimeout: timings.socketTimeoutMs,
    ...(ca === undefined ? {} : { tls: { ca } }),
    // The message is ours: no file or URL content is ever pulled into it.
    disableFileAccess: true,
    disableUrlAccess: true,
  });

  async function attempt(mail: OutgoingMail): Promise<MailOutcome> {
    for (let n = 1; ; n++) {
      try {
        const { to, subject, text, html } = mail;
        await transport.sendMail({ from: config.from, to, subject, text, html });
        return { sent: true };
      } catch (error) {
        if (n >= timings.attempts || !isTransient(error as never))
          return { sent: false, reason: reasonOf(error) };
        await pause(timings.retryBackoffMs * n);
      }
    }
  }

  return {
    transport: 'smtp',
    async send(mail) {
      const timedOut: MailOutcome = { sent: false, reason: 'send deadline exceeded' };
      return record(log, mail, await within(attempt(mail), timings.sendDeadlineMs, timedOut));
    },
    async close() {
      transport.close();
    },
  };
}

/** One kept mail of the dev mailbox, as stored in its JSON file. */
export interface StoredMail {
  id: string;
  date: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Development without SMTP_URL: each mail is a JSON file in the dev mailbox folder, readable by a
 * person at /dev/mailbox (never served in production). Files sort by date.
 */
export function createDevMailbox(
  config: Extract<MailConfig, { transport: 'dev-mailbox' }>,
  log: FastifyBaseLogger,
): Mailer {
  return {
    transport: 'dev-mailbox',
    async send(mail) {
      const date = new Date().toISOString();
      const id = `${date.replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}`;
      const stored: StoredMail = { id, date, from: config.from, ...mail };
      try {
        await mkdir(config.directory, { recursive: true, mode: 0o700 });
        await writeFile(join(config.directory, `${id}.json`), JSON.stringify(stored, null, 2), {
          mode: 0o600,
        });
        return record(log, mail, { sent: true });
      } catch (error) {
        return record(log, mail, { sent: false, reason: reasonOf(error) });
      }
    },
    async close() {},
  };
}

/** The mailer of a configuration, or null when mail is off (production without SMTP_URL). */
export async function createMailer(
  config: MailConfig | null,
  log: FastifyBaseLogger,
  timings?: SmtpTimings,
): Promise<Mailer | null> {
  if (config === null) return null;
  if (config.transport === 'smtp') return createSmtpMailer(config, log, timings);
  return createDevMailbox(config, log);
}
