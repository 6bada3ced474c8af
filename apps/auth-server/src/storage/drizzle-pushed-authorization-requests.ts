import type { PushedAuthorizationRequest, PushedAuthorizationRequestStore } from '@oidc-orders/oauth-core';
import { and, eq, gt, lte } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { pushedAuthorizationRequests } from '../db/schema.js';

/**
 * oauth-core `PushedAuthorizationRequestStore` on `pushed_authorization_requests`. Consuming is one
 * `DELETE … WHERE request_uri_hash AND client_id AND expires_at > now RETURNING`, so a request_uri is
 * used once even with several instances racing for it.
 */
export function createPushedAuthorizationRequestStore(db: AppDatabase): PushedAuthorizationRequestStore {
  return {
    async savePushedAuthorizationRequest(request) {
      await db.insert(pushedAuthorizationRequests).values({
        ...request,
        params: { ...request.params },
        resources: [...request.resources],
      });
    },
    async consumePushedAuthorizationRequest(requestUriHash, clientId, now) {
      const [row] = await db
        .delete(pushedAuthorizationRequests)
        .where(
          and(
            eq(pushedAuthorizationRequests.requestUriHash, requestUriHash),
            eq(pushedAuthorizationRequests.clientId, clientId),
            gt(pushedAuthorizationRequests.expiresAt, now),
          ),
        )
        .returning();
      return row === undefined ? null : fromRow(row);
    },
    async deleteExpiredPushedAuthorizationRequests(now) {
      const rows = await db
        .delete(pushedAuthorizationRequests)
        .where(lte(pushedAuthorizationRequests.expiresAt, now))
        .returning({ requestUriHash: pushedAuthorizationRequests.requestUriHash });
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
  };
}
