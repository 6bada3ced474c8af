import fp from 'fastify-plugin';
import { createEmailChange, type EmailChange } from '../mail/email-change.js';
import { createEmailVerification, type EmailVerification } from '../mail/email-verification.js';
import { createMailer, type Mailer, type SmtpTimings } from '../mail/mailer.js';
import {
  createPasswordRecovery,
  DEFAULT_MAIL_RATE_LIMITS,
  type MailRateLimits,
  type PasswordRecovery,
} from '../mail/password-reset.js';
import { createSecurityNotices, type SecurityNotices } from '../mail/security-notices.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** `null` when mail is off (production without SMTP_URL): no forgot-password link then. */
    mailer: Mailer | null;
    passwordRecovery: PasswordRecovery | null;
    /** Mails the user about changes to how they sign in; `null` when mail is off. */
    securityNotices: SecurityNotices | null;
    /** Verification links for the account page; `null` when mail is off. */
    emailVerification: EmailVerification | null;
    /** Changing the address from the account page; `null` when mail is off. */
    emailChange: EmailChange | null;
  }
}

export interface MailPluginOptions {
  /** Tests shorten the SMTP timeouts and deadline. */
  smtpTimings?: SmtpTimings;
  rateLimits?: Partial<MailRateLimits>;
}

/**
 * Mail (README "Email"): the SMTP mailer or the dev mailbox, and the password reset built on it.
 * Closing the app waits for mails still being handed over, then closes the SMTP pool.
 */
export const mailPlugin = fp<MailPluginOptions>(
  async (app, options) => {
    const log = app.log.child({ component: 'mail' });
    const mailer = await createMailer(app.config.mail, log, options.smtpTimings);
    const { clock, random, config } = app.protocol;
    const limits = { ...DEFAULT_MAIL_RATE_LIMITS, ...options.rateLimits };
    const recovery = mailer
      ? createPasswordRecovery({
          db: app.database.db,
          clock,
          random,
          issuer: config.issuer,
          mailer,
          signOut: app.userSignOut,
          log,
          limits,
        })
      : null;
    app.decorate('mailer', mailer);
    app.decorate('passwordRecovery', recovery);
    const emailOf = async (sub: string) =>
      (await app.protocol.stores.users.findUserBySub(sub))?.email ?? null;
    const notices = mailer ? createSecurityNotices({ issuer: config.issuer, mailer, log, emailOf }) : null;
    app.decorate('securityNotices', notices);
    const db = app.database.db;
    const issuer = config.issuer;
    app.decorate(
      'emailVerification',
      mailer ? createEmailVerification({ db, clock, random, issuer, mailer }) : null,
    );
    const signOut = app.userSignOut;
    app.decorate(
      'emailChange',
      mailer ? createEmailChange({ db, clock, random, issuer, mailer, signOut, limits }) : null,
    );
    if (mailer?.transport === 'dev-mailbox' && app.config.mail?.transport === 'dev-mailbox') {
      log.info(
        `mail: no SMTP_URL, mails are kept in the dev mailbox ${app.config.mail.directory} (read them at ${config.issuer}/dev/mailbox)`,
      );
    }
    app.addHook('onClose', async () => {
      await recovery?.settled();
      await notices?.settled();
      await mailer?.close();
    });
  },
  { name: 'mail', dependencies: ['config', 'db', 'protocol', 'logout'] },
);
