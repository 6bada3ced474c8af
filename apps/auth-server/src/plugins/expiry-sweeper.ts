import type { Clock } from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import type { AppDatabase } from '../db/client.js';
import { createInteractionRepository } from '../interaction/interaction-repository.js';
import { createSsoSessionRepository } from '../interaction/sso-session-repository.js';
import { deleteExpiredWebAuthnChallenges } from '../mfa/webauthn-challenges.js';

/**
 * Rows that live only until they expire. Every read of them already ignores an expired row
 * (`expires_at > now` in each lookup), so deleting them is housekeeping, not security: it keeps
 * the tables and their indexes small. Done off the request path, on a timer, so a sign-in does not
 * pay one `DELETE` per page for it.
 */
export const EXPIRING_ROWS: readonly {
  table: string;
  deleteExpired(db: AppDatabase, now: number): Promise<void>;
}[] = [
  { table: 'interactions', deleteExpired: (db, now) => createInteractionRepository(db).deleteExpired(now) },
  { table: 'sso_sessions', deleteExpired: (db, now) => createSsoSessionRepository(db).deleteExpired(now) },
  { table: 'webauthn_challenges', deleteExpired: deleteExpiredWebAuthnChallenges },
];

/** How often each instance sweeps: expired rows wait at most this long (they are never read). */
export const EXPIRY_SWEEP_INTERVAL_MS = 60_000;

/** One sweep of every table of `EXPIRING_ROWS`; the tables that failed, by name. */
export async function sweepExpiredRows(db: AppDatabase, now: number): Promise<string[]> {
  const results = await Promise.allSettled(EXPIRING_ROWS.map((rows) => rows.deleteExpired(db, now)));
  return EXPIRING_ROWS.filter((_, index) => results[index]?.status === 'rejected').map((rows) => rows.table);
}

export interface ExpirySweeperOptions {
  clock: Clock;
  /** Tests shorten it. */
  intervalMs?: number;
}

/** Every instance sweeps on its own timer; two sweeping at once delete disjoint or no rows. */
export const expirySweeperPlugin = fp<ExpirySweeperOptions>(
  async (app, options) => {
    const timer = setInterval(() => {
      void sweepExpiredRows(app.database.db, options.clock.nowSeconds()).then((failed) => {
        if (failed.length > 0) app.log.warn({ tables: failed }, 'deleting expired rows failed');
      });
    }, options.intervalMs ?? EXPIRY_SWEEP_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'expiry-sweeper', fastify: '5.x', dependencies: ['db'] },
);
