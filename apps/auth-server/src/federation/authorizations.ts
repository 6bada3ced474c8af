import { hashToken } from '@oidc-orders/oauth-core';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { upstreamAuthorizations } from '../db/schema.js';

/** How long the person has at the provider's pages before the started sign-in is forgotten. */
export const UPSTREAM_AUTHORIZATION_TTL_SECONDS = 600;

/** A pending link after a first sign-in has its own rows (./pending-links.ts). */
export type UpstreamAuthorizationPurpose = 'sign_in' | 'account_link' | 'logout';

export interface StartedAuthorization {
  providerId: string;
  browserHash: string;
  interactionId: string | null;
  /**
   * `sign_in` (login page), `account_link` (a signed-in user links a provider from the account
   * page; no interaction, `linkSub` is that user) or `logout`.
   */
  purpose: UpstreamAuthorizationPurpose;
  linkSub: string | null;
  /** `logout`: where the browser continues after the provider's end_session_endpoint. */
  returnTo?: string | null;
  codeVerifier: string;
  nonce: string;
}

export async function recordStartedAuthorization(
  db: AppDatabase,
  state: string,
  started: StartedAuthorization,
  now: number,
): Promise<void> {
  await db.delete(upstreamAuthorizations).where(lt(upstreamAuthorizations.expiresAt, now));
  await db.insert(upstreamAuthorizations).values({
    stateHash: hashToken(state),
    ...started,
    createdAt: now,
    expiresAt: now + UPSTREAM_AUTHORIZATION_TTL_SECONDS,
  });
}

/**
 * Takes the started sign-in of this `state` for this provider, once (a conditional UPDATE, so two
 * instances cannot both finish it). `null` for an unknown, used or expired state, or a state
 * started at another provider (a mix-up: the provider is bound into `state`).
 */
export async function takeStartedAuthorization(
  db: AppDatabase,
  state: string,
  providerId: string,
  now: number,
): Promise<StartedAuthorization | null> {
  const [row] = await db
    .update(upstreamAuthorizations)
    .set({ usedAt: now })
    .where(
      and(
        eq(upstreamAuthorizations.stateHash, hashToken(state)),
        eq(upstreamAuthorizations.providerId, providerId),
        isNull(upstreamAuthorizations.usedAt),
        gt(upstreamAuthorizations.expiresAt, now),
      ),
    )
    .returning();
  // A `link` row of an older version (a pending link, now ./pending-links.ts) is never taken as a started sign-in.
  if (row === undefined || row.purpose === 'link') return null;
  return {
    providerId: row.providerId,
    browserHash: row.browserHash,
    interactionId: row.interactionId,
    purpose: row.purpose,
    linkSub: row.linkSub,
    returnTo: row.returnTo,
    codeVerifier: row.codeVerifier,
    nonce: row.nonce,
  };
}
