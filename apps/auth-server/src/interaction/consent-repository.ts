import { and, eq, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { consents } from '../db/schema.js';
import { lazy } from '../storage/drizzle/prepared-statements.js';

export interface ConsentRepository {
  /** Scopes the user has approved for the client so far (empty when none). */
  findApprovedScopes(sub: string, clientId: string): Promise<string[]>;
  /** Adds `scopes` to what the user approved for the client (union, never narrows). */
  remember(sub: string, clientId: string, scopes: readonly string[], now: number): Promise<void>;
  /** Forgets every consent of the user for the client (revocation UI, later). */
  forget(sub: string, clientId: string): Promise<void>;
}

export function createConsentRepository(db: AppDatabase): ConsentRepository {
  const p = (name: string) => sql.placeholder(name);
  // One statement, so two approvals racing on different instances both end up in the union. An
  // approval of scopes already remembered (prompt=consent asks every time) updates nothing: no new
  // row version, no WAL. Prepared, since every approval on the consent page runs it.
  const remember = lazy(() =>
    db
      .insert(consents)
      .values({
        sub: p('sub'),
        clientId: p('clientId'),
        scopes: p('scopes'),
        createdAt: p('now'),
        updatedAt: p('now'),
      })
      .onConflictDoUpdate({
        target: [consents.sub, consents.clientId],
        set: {
          scopes: sql`array(select distinct unnest(${consents.scopes} || excluded.scopes) order by 1)`,
          updatedAt: sql`excluded.updated_at`,
        },
        setWhere: sql`not (${consents.scopes} @> excluded.scopes)`,
      })
      .prepare('auth_remember_consent'),
  );
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
      await remember().execute({ sub, clientId, scopes: [...scopes], now });
    },
    async forget(sub, clientId) {
      await db.delete(consents).where(and(eq(consents.sub, sub), eq(consents.clientId, clientId)));
    },
  };
}
