import type { JtiReplayStore } from '@oidc-orders/oauth-core';
import { lte } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { dpopJtis } from '../../db/schema.js';

/**
 * oauth-core `JtiReplayStore` on the `dpop_jtis` table, shared by every instance: a DPoP proof,
 * client assertion or request object replayed against another instance is still seen. `markUsed`
 * is one `INSERT … ON CONFLICT DO NOTHING RETURNING`, atomic across processes.
 */
export function createJtiReplayStore(db: AppDatabase): JtiReplayStore {
  return {
    async markUsed(key, expiresAt) {
      const rows = await db
        .insert(dpopJtis)
        .values({ key, expiresAt })
        .onConflictDoNothing({ target: dpopJtis.key })
        .returning({ key: dpopJtis.key });
      return rows.length === 1;
    },
    async deleteExpired(now) {
      const rows = await db
        .delete(dpopJtis)
        .where(lte(dpopJtis.expiresAt, now))
        .returning({ key: dpopJtis.key });
      return rows.length;
    },
  };
}
