import type { Grant, GrantStore } from '@oidc-orders/oauth-core';
import { and, eq, isNull } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { accessTokens, grants, refreshTokens } from '../../db/schema.js';
import type { HotPathStatements } from './prepared-statements.js';

/** Grants (one per consent or device approval); every code and token row carries its `grant_id`. */
export function createGrantStore(
  db: AppDatabase,
  hot: HotPathStatements,
  context: { inTransaction: boolean },
): GrantStore {
  const revokeGrantRows = async (executor: AppDatabase, id: string, at: number) => {
    // Idempotent: a grant (or token) revoked earlier keeps its first revocation time.
    await executor
      .update(grants)
      .set({ revokedAt: at })
      .where(and(eq(grants.id, id), isNull(grants.revokedAt)));
    await executor
      .update(refreshTokens)
      .set({ revokedAt: at })
      .where(and(eq(refreshTokens.grantId, id), isNull(refreshTokens.revokedAt)));
    await executor
      .update(accessTokens)
      .set({ revokedAt: at })
      .where(and(eq(accessTokens.grantId, id), isNull(accessTokens.revokedAt)));
  };

  return {
    async createGrant(grant) {
      await db.insert(grants).values(grantValues(grant));
    },
    async findGrant(id) {
      const [row] = await hot.findGrant().execute({ id });
      return row ? grantFromRow(row) : null;
    },
    async findGrantsBySid(sid) {
      const rows = await db.select().from(grants).where(eq(grants.sid, sid));
      return rows.map(grantFromRow);
    },
    async revokeGrant(id, at) {
      // The contract asks for one unit of work: inside a caller's transaction that is already the
      // case; on its own it opens one.
      if (context.inTransaction) await revokeGrantRows(db, id, at);
      else await db.transaction((tx) => revokeGrantRows(tx, id, at));
    },
  };
}

export function grantFromRow(row: typeof grants.$inferSelect): Grant {
  return {
    id: row.id,
    clientId: row.clientId,
    sub: row.sub,
    scopes: row.scopes,
    resources: row.resources,
    sid: row.sid,
    authTime: row.authTime,
    amr: row.amr,
    acr: row.acr,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
  };
}

/** A grant as its row's values (the arrays copied: the record's may be read-only). */
export const grantValues = (grant: Grant) => ({
  ...grant,
  scopes: [...grant.scopes],
  resources: [...grant.resources],
  amr: grant.amr ? [...grant.amr] : null,
});
