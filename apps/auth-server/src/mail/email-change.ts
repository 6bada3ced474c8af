import { type Clock, hashToken, type RandomSource } from '@oidc-orders/oauth-core';
import { and, eq } from 'drizzle-orm';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { mailTokens } from '../db/schema.js';
import { translatorForAccount } from '../i18n/translator.js';
import type { UserSignOut } from '../logout/user-sign-out.js';
import { createMailRateLimiter, type MailRateLimits } from './mail-rate-limits.js';
import { createMailTokenRepository } from './mail-tokens.js';
import type { Mailer, MailOutcome } from './mailer.js';
import { type ChangeContext, emailChangeConfirmationMail, emailChangeNoticeMail } from './messages.js';

export const EMAIL_CHANGE_TTL_SECONDS = 24 * 3600;
/** The undo link outlives the change by days: the old address may be read rarely. */
export const EMAIL_CHANGE_UNDO_TTL_SECONDS = 7 * 24 * 3600;

/** A plain shape check (RFC 5321 §4.1.2 is far wider): something@domain, no spaces, bounded. */
export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
}

/** The change a link carries: from which address to which, so a link of another change does nothing. */
const changeBinding = (from: string, to: string) =>
  hashToken(`mail-token-change:${from.toLowerCase()}>${to.toLowerCase()}`);

/**
 * Changing the address (README "Email"): the new address gets a confirmation link, the old one a
 * notice with an undo link. The old address stays until the new one is confirmed; the undo link
 * puts the old address back (or cancels the pending change) and signs the user out everywhere.
 */
export function createEmailChange(deps: {
  db: AppDatabase;
  clock: Clock;
  random: RandomSource;
  issuer: string;
  mailer: Mailer;
  signOut: Pick<UserSignOut, 'endUserSessions'>;
  limits: MailRateLimits;
}) {
  const tokens = createMailTokenRepository(deps);
  const limiter = createMailRateLimiter(deps);
  const accounts = createDrizzleAccountStore(deps.db);
  const link = (path: string, token: string) => `${deps.issuer}/${path}?token=${encodeURIComponent(token)}`;

  const userOf = (sub: string) => accounts.findAccount(sub);

  return {
    /**
     * Mails the confirmation to `newAddress` and the notice to the current one; says whether the
     * confirmation went. Counted as the forgot-password form counts (./mail-rate-limits.ts): per
     * recipient (the same counter as a reset to that address) and per account, so no signed-in
     * person can flood a mailbox with "Confirm your new address".
     */
    async request(
      sub: string,
      newAddress: string,
      context: ChangeContext,
    ): Promise<MailOutcome | { sent: false; reason: 'limited'; retryAfterSeconds: number }> {
      const retryAfterSeconds = await limiter.hit({ recipient: newAddress, sub, ip: context.ip });
      if (retryAfterSeconds !== null) return { sent: false, reason: 'limited', retryAfterSeconds };
      const user = await userOf(sub);
      const from = user?.email ?? '';
      const binding = changeBinding(from, newAddress);
      const confirm = await tokens.issue({
        sub,
        purpose: 'email_change',
        binding,
        email: newAddress,
        ttlSeconds: EMAIL_CHANGE_TTL_SECONDS,
      });
      const sent = await deps.mailer.send(
        emailChangeConfirmationMail({
          t: translatorForAccount(user),
          issuer: deps.issuer,
          to: newAddress,
          link: link('confirm-email', confirm),
        }),
      );
      if (!sent.sent || !from) return sent;
      const undo = await tokens.issue({
        sub,
        purpose: 'email_change_undo',
        binding,
        email: from,
        ttlSeconds: EMAIL_CHANGE_UNDO_TTL_SECONDS,
      });
      const notice = {
        t: translatorForAccount(user),
        issuer: deps.issuer,
        to: from,
        newAddress,
        link: link('undo-email-change', undo),
        context,
      };
      await deps.mailer.send(emailChangeNoticeMail(notice));
      return sent;
    },

    isUsable: async (token: string, purpose: 'email_change' | 'email_change_undo') =>
      (await tokens.peek(token, purpose)) !== null,

    /** The new address becomes the account's, verified, if the account still has the address the change started from. */
    async confirm(token: string): Promise<boolean> {
      const record = await tokens.consume(token, 'email_change');
      const user = record && (await userOf(record.sub));
      if (!record || !user || changeBinding(user.email ?? '', record.email) !== record.binding) return false;
      // The link proved the address; it is verified here unless another account has it as its own.
      await accounts.setProvenAddress(record.sub, record.email, deps.clock.nowSeconds());
      return true;
    },

    /** "This was not me": the pending change is void, the old address is back, every session ends. */
    async undo(token: string): Promise<boolean> {
      const record = await tokens.consume(token, 'email_change_undo');
      if (!record) return false;
      await deps.db
        .delete(mailTokens)
        .where(and(eq(mailTokens.sub, record.sub), eq(mailTokens.purpose, 'email_change')));
      await accounts.setProvenAddress(record.sub, record.email, deps.clock.nowSeconds());
      await deps.signOut.endUserSessions(record.sub);
      return true;
    },
  };
}

export type EmailChange = ReturnType<typeof createEmailChange>;
