import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { describeUserAgent } from '../account/user-agent.js';
import { ENGLISH } from '../i18n/translator.js';
import type { Mailer } from './mailer.js';
import { type ChangeContext, type SecurityNoticeKind, securityNoticeMail } from './messages.js';

/** Where and when a request made a change, as the account page's sessions list names it. */
export function changeContextOf(request: FastifyRequest, at: Date = new Date()): ChangeContext {
  return { at, device: describeUserAgent(request.headers['user-agent']), ip: request.ip };
}

/**
 * Security notices by mail (README "Email"): the user is told of a change to how they sign in.
 * Sent in the background: a slow or failing SMTP server never holds the page that made the change
 * (the mailer logs and counts the failure).
 */
export function createSecurityNotices(deps: {
  issuer: string;
  mailer: Mailer;
  log: FastifyBaseLogger;
  /** The user's current address (the stores' user lookup). */
  emailOf: (sub: string) => Promise<string | null>;
}) {
  const pending = new Set<Promise<unknown>>();
  return {
    notify(request: FastifyRequest, sub: string, kind: SecurityNoticeKind, service?: string): void {
      const context = changeContextOf(request);
      // The person made the change on a page just now: the notice speaks that page's language.
      const t = request.language ?? ENGLISH;
      const mail = (to: string) =>
        securityNoticeMail({ t, issuer: deps.issuer, to, kind, context, ...(service ? { service } : {}) });
      const sending = deps
        .emailOf(sub)
        .then((to) => (to ? deps.mailer.send(mail(to)) : null))
        .catch((error) => deps.log.error({ err: error }, 'security notice failed'));
      pending.add(sending);
      void sending.finally(() => pending.delete(sending));
    },
    /** Resolves when the notices started so far have been handed over (or given up). */
    async settled(): Promise<void> {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

export type SecurityNotices = ReturnType<typeof createSecurityNotices>;
