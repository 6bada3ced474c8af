import type { Clock, RandomSource } from '@oidc-orders/oauth-core';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { translatorForAccount } from '../i18n/translator.js';
import { addressBinding, createMailTokenRepository } from './mail-tokens.js';
import type { Mailer, MailOutcome } from './mailer.js';
import { emailVerificationMail } from './messages.js';

/** A day: the person may read the mail later than a reset mail, and the link grants nothing but the flag. */
export const VERIFICATION_LINK_TTL_SECONDS = 24 * 3600;

export type VerificationRequestOutcome =
  | MailOutcome
  | { sent: false; reason: 'no_email' | 'already_verified' };

/**
 * Verifying the user's address (README "Email"): the account page mails a link; the link's page
 * (GET: nothing changes, mail scanners open links) has a button whose POST uses the token up and
 * marks the address verified, if it is still the address the link was mailed to.
 */
export function createEmailVerification(deps: {
  db: AppDatabase;
  clock: Clock;
  random: RandomSource;
  issuer: string;
  mailer: Mailer;
}) {
  const tokens = createMailTokenRepository(deps);
  const accounts = createDrizzleAccountStore(deps.db);

  async function currentAddressMatches(sub: string, binding: string): Promise<boolean> {
    const user = await accounts.findAccount(sub);
    return !!user?.email && user.disabledAt === null && addressBinding(user.email) === binding;
  }

  return {
    /** Mails a verification link to the user's address; the page says whether it went. */
    async send(sub: string): Promise<VerificationRequestOutcome> {
      const user = await accounts.findAccount(sub);
      if (!user?.email) return { sent: false, reason: 'no_email' };
      if (user.emailVerified) return { sent: false, reason: 'already_verified' };
      const binding = addressBinding(user.email);
      const purpose = 'email_verification';
      const ttlSeconds = VERIFICATION_LINK_TTL_SECONDS;
      const token = await tokens.issue({ sub, purpose, binding, email: user.email, ttlSeconds });
      const link = `${deps.issuer}/verify-email?token=${encodeURIComponent(token)}`;
      return deps.mailer.send(
        emailVerificationMail({
          t: translatorForAccount(user),
          issuer: deps.issuer,
          to: user.email,
          link,
          hours: 24,
        }),
      );
    },

    async isUsable(token: string): Promise<boolean> {
      const record = await tokens.peek(token, 'email_verification');
      return record !== null && (await currentAddressMatches(record.sub, record.binding));
    },

    /** Uses the link up and marks the address verified; false when the link is not (or no longer) good. */
    async confirm(token: string): Promise<boolean> {
      const record = await tokens.consume(token, 'email_verification');
      if (!record || !(await currentAddressMatches(record.sub, record.binding))) return false;
      // A verified address belongs to one account: another account's own address stays unverified here.
      return accounts.markAddressVerified(record.sub, record.email, deps.clock.nowSeconds());
    },
  };
}

export type EmailVerification = ReturnType<typeof createEmailVerification>;
