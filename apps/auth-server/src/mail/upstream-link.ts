import type { Clock, RandomSource } from '@oidc-orders/oauth-core';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { translatorForAccount } from '../i18n/translator.js';
import { createMailTokenRepository } from './mail-tokens.js';
import type { Mailer, MailOutcome } from './mailer.js';
import { upstreamLinkMail } from './messages.js';

/**
 * Short: the person is in the middle of signing in, and the interaction it continues does not
 * outlive the upstream sign-in's started authorization (UPSTREAM_AUTHORIZATION_TTL_SECONDS) by much.
 */
export const UPSTREAM_LINK_TTL_SECONDS = 10 * 60;

/**
 * What a mailed link proves and continues: this upstream subject at this provider becomes a way
 * into the local account `sub`, for the sign-in of this interaction in this browser (its cookie's
 * hash). Stored as the token row's binding; the token itself only as its hash.
 */
export interface MailedLinkBinding {
  providerId: string;
  subject: string;
  sub: string;
  interactionId: string;
  browserHash: string;
}

/** The path of a mailed link's page (under the issuer, never the request's Host). */
export const mailedLinkPath = (providerId: string) => `/idp/${providerId}/link`;

/** `alice@example.test` → `a…e@example.test`: enough for the owner to recognise, little for anyone else. */
export function maskedAddress(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '…';
  const local = email.slice(0, at);
  const shown = local.length <= 2 ? `${local[0]}…` : `${local[0]}…${local[local.length - 1]}`;
  return `${shown}${email.slice(at)}`;
}

function bindingOf(link: MailedLinkBinding): string {
  const { providerId, subject, sub, interactionId, browserHash } = link;
  return JSON.stringify({ providerId, subject, sub, interactionId, browserHash });
}

function parseBinding(sub: string, binding: string): MailedLinkBinding | null {
  try {
    const parsed = JSON.parse(binding) as Partial<MailedLinkBinding>;
    const fields = [parsed.providerId, parsed.subject, parsed.interactionId, parsed.browserHash];
    if (!fields.every((field) => typeof field === 'string') || parsed.sub !== sub) return null;
    return parsed as MailedLinkBinding;
  } catch {
    return null;
  }
}

/**
 * The second proof of an e-mail link (README "Upstream identity providers"): a single-use link
 * mailed to the existing account's own address (mail_tokens, purpose `upstream_link`; one live
 * link per account, a newer one voids the older).
 */
export function createUpstreamLinkMail(deps: {
  db: AppDatabase;
  clock: Clock;
  random: RandomSource;
  issuer: string;
  mailer: Mailer;
}) {
  const tokens = createMailTokenRepository(deps);
  const accounts = createDrizzleAccountStore(deps.db);
  const purpose = 'upstream_link';

  return {
    /** Mails the link to `email` (the local account's stored address). */
    async send(
      link: MailedLinkBinding,
      email: string,
      providerName: string,
    ): Promise<MailOutcome | { sent: false; reason: 'not_own_address' }> {
      // Only to an address that is this account's own (src/accounts/account-mail.ts).
      if ((await accounts.accountMailRecipient(email, 'upstream_link')) !== link.sub)
        return { sent: false, reason: 'not_own_address' };
      const token = await tokens.issue({
        sub: link.sub,
        purpose,
        binding: bindingOf(link),
        email,
        ttlSeconds: UPSTREAM_LINK_TTL_SECONDS,
      });
      const url = `${deps.issuer}${mailedLinkPath(link.providerId)}?token=${encodeURIComponent(token)}`;
      const minutes = UPSTREAM_LINK_TTL_SECONDS / 60;
      const t = translatorForAccount(await accounts.findAccount(link.sub));
      return deps.mailer.send(
        upstreamLinkMail({ t, issuer: deps.issuer, to: email, providerName, link: url, minutes }),
      );
    },

    /** The binding of a live link, without using it up (opening the page changes nothing). */
    async peek(token: string): Promise<(MailedLinkBinding & { email: string }) | null> {
      const record = await tokens.peek(token, purpose);
      const link = record ? parseBinding(record.sub, record.binding) : null;
      return link && record ? { ...link, email: record.email } : null;
    },

    /** Uses the link up: a conditional DELETE, so it works once across every instance. */
    async consume(token: string): Promise<(MailedLinkBinding & { email: string }) | null> {
      const record = await tokens.consume(token, purpose);
      const link = record ? parseBinding(record.sub, record.binding) : null;
      return link && record ? { ...link, email: record.email } : null;
    },
  };
}

export type UpstreamLinkMail = ReturnType<typeof createUpstreamLinkMail>;
