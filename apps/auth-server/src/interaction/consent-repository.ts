import { and, eq, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { consents } from '../db/schema.js';

export interface ConsentRepository {
  /** Scopes the user has approved for the client so far (empty when none). */
  findApprovedScopes(sub: string, clientId: string): Promise<string[]>;
  /** Adds `scopes` to what the user approved for the client (union, never narrows). */
  remember(sub: string, clientId: string, scopes: readonly string[], now: number): Promise<void>;
  /** Forgets every consent of the user for the client (revocation UI, later). */
  forget(sub: string, clientId: string): Promise<void>;
}

export function createConsentRepository(db: AppDatabase): ConsentRepository {
  return {
    async findApprovedScopes(sub, clientId) {
      const rows = await db
        .select({ scopes: consents.scopes })
        .from(consents)
        .where(and(eq(consents.sub, sub), eq(consents.clientId, clientId)))
        .limit(1);
      return rows[0]?.scopes ?? [];
    },
    async remember(sub, clientId, scopes, now) {
      // One statement, so two approvals racing on different instances both end up in the union.
      await db
        .insert(consents)
        .values({ sub, clientId, scopes: [...scopes], createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: [consents.sub, consents.clientId],
          set: {
            scopes: sql`array(select distinct unnest(${consents.scopes} || excluded.scopes) order by 1)`,
            updatedAt: now,
          },
        });
    },
    async forget(sub, clientId) {
      await db.delete(consents).where(and(eq(consents.sub, sub), eq(consents.clientId, clientId)));
    },
  };
}
