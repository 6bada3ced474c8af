import { hashToken } from '@oidc-orders/oauth-core';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { pendingUpstreamLinks } from '../db/schema.js';
import { UPSTREAM_AUTHORIZATION_TTL_SECONDS } from './authorizations.js';

/**
 * A link offered to an existing account after a first upstream sign-in (schema
 * `pending_upstream_links`): which upstream identity waits for which account, and the browser and
 * interaction it was offered in. Its own row shape, not a started authorization's: it has no
 * `code_verifier` or `nonce`, and its upstream subject is not a `return_to`.
 */
export interface PendingLink {
  providerId: string;
  upstreamSubject: string;
  sub: string;
  browserHash: string;
  interactionId: string;
}

/** As long as the started sign-in it continues: the person is still in the middle of signing in. */
export const PENDING_LINK_TTL_SECONDS = UPSTREAM_AUTHORIZATION_TTL_SECONDS;

export async function recordPendingLink(
  db: AppDatabase,
  token: string,
  link: PendingLink,
  now: number,
): Promise<void> {
  // Housekeeping without a scheduler: expired offers of anyone go with each new one.
  await db.delete(pendingUpstreamLinks).where(lt(pendingUpstreamLinks.expiresAt, now));
  await db.insert(pendingUpstreamLinks).values({
    tokenHash: hashToken(token),
    ...link,
    createdAt: now,
    expiresAt: now + PENDING_LINK_TTL_SECONDS,
  });
}

/**
 * Takes the pending link of this token at this provider, once (a conditional UPDATE, so two
 * instances or two tabs cannot both use it). `null` for an unknown, used or expired token.
 */
export async function takePendingLink(
  db: AppDatabase,
  token: string,
  providerId: string,
  now: number,
): Promise<PendingLink | null> {
  const [row] = await db
    .update(pendingUpstreamLinks)
    .set({ usedAt: now })
    .where(
      and(
        eq(pendingUpstreamLinks.tokenHash, hashToken(token)),
        eq(pendingUpstreamLinks.providerId, providerId),
        isNull(pendingUpstreamLinks.usedAt),
        gt(pendingUpstreamLinks.expiresAt, now),
      ),
    )
    .returning();
  if (row === undefined) return null;
  const { providerId: id, upstreamSubject, sub, browserHash, interactionId } = row;
  return { providerId: id, upstreamSubject, sub, browserHash, interactionId };
}
