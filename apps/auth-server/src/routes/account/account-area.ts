import type { User } from '@oidc-orders/oauth-core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountNotice } from '../../account/account-result.js';
import type { SsoSession } from '../../interaction/sso-session-repository.js';

/**
 * What every topic of the account page (./account-*.ts) borrows from the area itself
 * (./account.ts): the person its guard let through, and the page a change answers with.
 */

/** The signed-in person at their level (second factor done when they have one). */
export interface AccountHolder {
  session: SsoSession;
  user: User;
  browserKey: string;
}

export type AccountPageNotice = Pick<AccountNotice, 'kind' | 'text'>;

export interface AccountPageHelpers {
  /** `<base path>/account`. */
  accountUrl: string;
  basePath: string;
  /** The person the area's guard let through (signed in, CSRF token valid, recent where the route says). */
  accountHolder(request: FastifyRequest): AccountHolder;
  /** The page for a GET; for a POST a 303 to it (post/redirect/get) carrying the notice. */
  sendAccountPage(
    reply: FastifyReply,
    current: AccountHolder,
    status?: number,
    notice?: AccountPageNotice,
  ): Promise<unknown>;
}

/** A text field of a posted form; '' when absent. */
export const formField = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};
