import type { PushedAuthorizationRequest, PushedAuthorizationRequestStore } from '@oidc-orders/oauth-core';
import { and, eq, gt, isNull, lte } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { pushedAuthorizationRequests } from '../../db/schema.js';

/**
 * oauth-core `PushedAuthorizationRequestStore` on `pushed_authorization_requests`. /authorize reads
 * a request without spending it; the code spends it with one
 * `UPDATE … SET used_at WHERE request_uri_hash AND client_id AND used_at IS NULL RETURNING`, so it
 * leads to one code even with several instances racing for it.
 */
export function createPushedAuthorizationRequestStore(db: AppDatabase): PushedAuthorizationRequestStore {
  const table = pushedAuthorizationRequests;
  return {
    async savePushedAuthorizationRequest(request) {
      await db.insert(table).values({
        ...request,
        params: { ...request.params },
        resources: [...request.resources],
      });
    },
    async findPushedAuthorizationRequest(requestUriHash, clientId, now) {
      const [row] = await db
        .select()
        .from(table)
        .where(
          and(
            eq(table.requestUriHash, requestUriHash),
            eq(table.clientId, clientId),
            gt(table.expiresAt, now),
            isNull(table.usedAt),
          ),
        )
        .limit(1);
      return row === undefined ? null : fromRow(row);
    },
    async markPushedAuthorizationRequestUsed(requestUriHash, clientId, now) {
      const rows = await db
        .update(table)
        .set({ usedAt: now })
        .where(
          and(eq(table.requestUriHash, requestUriHash), eq(table.clientId, clientId), isNull(table.usedAt)),
        )
        .returning({ requestUriHash: table.requestUriHash });
      return rows.length === 1;
    },
    async deleteExpiredPushedAuthorizationRequests(before) {
      const rows = await db
        .delete(table)
        .where(lte(table.expiresAt, before))
        .returning({ requestUriHash: table.requestUriHash });
      return rows.length;
    },
  };
}

function fromRow(row: typeof pushedAuthorizationRequests.$inferSelect): PushedAuthorizationRequest {
  return {
    requestUriHash: row.requestUriHash,
    clientId: row.clientId,
    params: row.params,
    resources: row.resources,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    usedAt: row.usedAt,
  };
}
