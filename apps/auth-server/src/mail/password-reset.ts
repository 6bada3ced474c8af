import { type Clock, hashPassword, type RandomSource } from '@oidc-orders/oauth-core';
import type { FastifyBaseLogger } from 'fastify';
import { passwordProblem } from '../account/common-passwords.js';
import { rulesOf } from '../accounts/account-kinds.js';
import type { AccountRecord } from '../accounts/account-store.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import { AUDIT_EVENTS, audit } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { translatorForAccount } from '../i18n/translator.js';
import type { UserSignOut } from '../logout/user-sign-out.js';
import { createMailRateLimiter, type MailRateLimits } from './mail-rate-limits.js';
import { createMailTokenRepository, type MailTokenRecord, passwordBinding } from './mail-tokens.js';
import type { Mailer, MailOutcome } from './mailer.js';
import { type ChangeContext, passwordChangedMail, passwordResetMail } from './messages.js';

/** At most 30 minutes (OWASP Forgot Password Cheat Sheet: short-lived, single-use). */
export const RESET_LINK_TTL_SECONDS = 30 * 60;

export { DEFAULT_MAIL_RATE_LIMITS, type MailRateLimits } from './mail-rate-limits.js';

export interface PasswordRecoveryDeps {
  db: AppDatabase;
  clock: Clock;
  random: RandomSource;
  issuer: string;
  mailer: Mailer;
  signOut: Pick<UserSignOut, 'endUserSessions'>;
  log: FastifyBaseLogger;
  limits: MailRateLimits;
}

export type ResetRequestOutcome = { kind: 'accepted' } | { kind: 'limited'; retryAfterSeconds: number };

export type ResetOutcome =
  | { kind: 'invalid_link' }
  | { kind: 'refused'; problem: string }
  | { kind: 'changed'; sessionsEnded: number };

/** The link of a token: under the issuer, never the request's Host (README "Email"). */
export function resetLink(issuer: string, token: string): string {
  return `${issuer}/reset-password?token=${encodeURIComponent(token)}`;
}

/**
 * Self-service password reset by mail (README "Email"). Requests answer the same way for a known
 * and an unknown address: the lookup, the token and the mail happen after the answer, in the
 * background, so neither the page nor its timing tells whether the address has an account.
 */
export function createPasswordRecovery(deps: PasswordRecoveryDeps) {
  const tokens = createMailTokenRepository(deps);
  const accounts = createDrizzleAccountStore(deps.db);
  const limiter = createMailRateLimiter(deps);
  const pending = new Set<Promise<void>>();

  /** Per recipient and per client address, counted in the shared table (every instance the same budget). */
  const rateLimited = (email: string, ip: string) => limiter.hit({ recipient: email, ip });

  /**
   * Runs `work` after the current response has been written (the next turn of the event loop), so
   * neither its database queries nor the SMTP exchange delay the answer: a known address must not
   * answer later than an unknown one.
   */
  function inBackground(work: () => Promise<void>): void {
    const afterResponse = new Promise<void>((resolve) => setImmediate(resolve));
    const running = afterResponse
      .then(work)
      .catch((error) => deps.log.error({ err: error }, 'password reset mail failed'));
    pending.add(running);
    void running.finally(() => pending.delete(running));
  }

  const userOf = async (sub: string | null) => (sub === null ? null : accounts.findAccount(sub));

  /**
   * The account a reset for `email` may go to (src/accounts/account-mail.ts): the one whose own
   * address it is, and only an account with a local password. A directory user's password lives in
   * the directory (a local one would outlive the entry); a federated account has none, and an
   * upstream identity that merely claims an address must never receive its owner's reset.
   */
  const resetRecipient = async (email: string) =>
    userOf(await accounts.accountMailRecipient(email, 'password_reset'));

  /** At most one mail per request: to the one account the address belongs to, if any. */
  async function mailResetLink(email: string): Promise<void> {
    const user = await resetRecipient(email);
    if (user?.email) await sendResetLink({ ...user, email: user.email });
  }

  async function sendResetLink(user: AccountRecord & { email: string }): Promise<MailOutcome> {
    const token = await tokens.issue({
      sub: user.sub,
      purpose: 'password_reset',
      binding: passwordBinding(user.passwordHash),
      email: user.email,
      ttlSeconds: RESET_LINK_TTL_SECONDS,
    });
    const link = resetLink(deps.issuer, token);
    const mail = passwordResetMail({
      // In the language the user last signed in with: the form's language may be anyone's.
      t: translatorForAccount(user),
      issuer: deps.issuer,
      to: user.email,
      link,
      minutes: RESET_LINK_TTL_SECONDS / 60,
    });
    return deps.mailer.send(mail);
  }

  /** The live record of a link still good for its user's current password, or null. */
  async function usableLink(token: string): Promise<{ record: MailTokenRecord; user: AccountRecord } | null> {
    const record = await tokens.peek(token, 'password_reset');
    if (!record) return null;
    const user = await accounts.findAccount(record.sub);
    if (
      !user ||
      user.disabledAt !== null ||
      !rulesOf(user.managedBy).localPassword ||
      passwordBinding(user.passwordHash) !== record.binding
    )
      return null;
    return { record, user };
  }

  /**
   * Checks the new password first (the link stays usable after a refused one), then uses the link
   * up and sets the password in one transaction, conditional on the password it was bound to.
   */
  async function setNewPassword(token: string, newPassword: string): Promise<ResetOutcome> {
    const usable = await usableLink(token);
    if (!usable) return { kind: 'invalid_link' };
    const problem = await passwordProblem(newPassword, usable.user.username);
    if (problem !== null) return { kind: 'refused', problem };
    const passwordHash = await hashPassword(newPassword);
    const changed = await deps.db.transaction(async (tx) => {
      const consumed = await tokens.consume(token, 'password_reset', tx as unknown as AppDatabase);
      if (!consumed || consumed.binding !== usable.record.binding) return false;
      // The link was mailed to the address: using it proves the address (while it is unchanged and
      // no other account has it as its own: a verified address belongs to one account).
      return createDrizzleAccountStore(tx as unknown as AppDatabase).setPassword(
        consumed.sub,
        passwordHash,
        deps.clock.nowSeconds(),
        { replacing: usable.user.passwordHash, provesAddress: consumed.email },
      );
    });
    if (!changed) return { kind: 'invalid_link' };
    const ended = await deps.signOut.endUserSessions(usable.user.sub);
    audit(deps.log, AUDIT_EVENTS.passwordChanged, { sub: usable.user.sub, count: ended.sessions });
    return { kind: 'changed', sessionsEnded: ended.sessions };
  }

  return {
    /** The forgot-password form: rate limits first (the same for every address), then the mail in the background. */
    async request(rawEmail: string, ip: string): Promise<ResetRequestOutcome> {
      const email = rawEmail.trim().toLowerCase();
      const retryAfterSeconds = await rateLimited(email, ip);
      if (retryAfterSeconds !== null) return { kind: 'limited', retryAfterSeconds };
      if (email.includes('@')) inBackground(() => mailResetLink(email));
      return { kind: 'accepted' };
    },

    /** Whether a link may show its form (GET: nothing is used up or changed). */
    async isUsable(token: string): Promise<boolean> {
      return (await usableLink(token)) !== null;
    },

    /** Completes a reset; on success every session and token of the user ends and a notice is mailed. */
    async reset(token: string, newPassword: string, context: ChangeContext): Promise<ResetOutcome> {
      const usable = await usableLink(token);
      const outcome = await setNewPassword(token, newPassword);
      if (outcome.kind === 'changed' && usable?.user.email) {
        const mail = passwordChangedMail({
          t: translatorForAccount(usable.user),
          issuer: deps.issuer,
          to: usable.user.email,
          context,
        });
        inBackground(async () => void (await deps.mailer.send(mail)));
      }
      return outcome;
    },

    /**
     * An operator's `users send-reset`: mails a link to the user's address now and says whether it
     * went (the operator, unlike the forgot-password form, may know that the account exists).
     */
    async sendResetLinkTo(
      sub: string,
    ): Promise<MailOutcome | { sent: false; reason: 'no_email' | 'no_local_password' }> {
      const user = await userOf(sub);
      if (user !== null && !rulesOf(user.managedBy).localPassword)
        return { sent: false, reason: 'no_local_password' };
      // The same rule as the form: only to an address that is this account's own.
      if (!user?.email || (await accounts.accountMailRecipient(user.email, 'password_reset')) !== sub)
        return { sent: false, reason: 'no_email' };
      return sendResetLink({ ...user, email: user.email });
    },

    /** Resolves when the mails started so far have been handed over (or given up). */
    async settled(): Promise<void> {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

export type PasswordRecovery = ReturnType<typeof createPasswordRecovery>;
