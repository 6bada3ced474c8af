import type { DpopReplayStore } from '@oidc-orders/oauth-core';
import { lte } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { dpopProofJtis } from '../db/schema.js';

/**
 * The DPoP `jti` store (oauth-core's `DpopReplayStore` contract) on this app's database: one
 * `INSERT … ON CONFLICT DO NOTHING RETURNING`, so of two instances seeing the same proof at once
 * exactly one records it and the other is told it is a replay (RFC 9449 §11.1).
 * Times are whole seconds since the epoch, as the contract has them.
 */
export function dpopReplayStore(db: AppDatabase): DpopReplayStore {
  return {
    async markUsed(key, expiresAt) {
      const inserted = await db
        .insert(dpopProofJtis)
        .values({ key, expiresAt: new Date(expiresAt * 1000) })
        .onConflictDoNothing()
        .returning({ key: dpopProofJtis.key });
      return inserted.length === 1;
    },
    async deleteExpired(now) {
      const deleted = await db
        .delete(dpopProofJtis)
        .where(lte(dpopProofJtis.expiresAt, new Date(now * 1000)))
        .returning({ key: dpopProofJtis.key });
      return deleted.length;
    },
  };
}
