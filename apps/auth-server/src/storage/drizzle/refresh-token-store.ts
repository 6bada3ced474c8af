import type { RefreshToken, RefreshTokenStore } from '@oidc-orders/oauth-core';
import { and, eq, isNull } from 'drizzle-orm';
import { userFromRow } from '../../accounts/drizzle/user-store.js';
import type { AppDatabase } from '../../db/client.js';
import { refreshTokens } from '../../db/schema.js';
import type { CoalescedLookups } from './coalesced-lookups.js';
import { grantFromRow } from './grant-store.js';
import { consumeAndStore, type HotPathStatements, type RedemptionStatements } from './prepared-statements.js';

/** Refresh tokens (RFC 6749 §6), rotated once each (RFC 9700 §4.14.2), stored as hashes. */
export function createRefreshTokenStore(
  db: AppDatabase,
  hot: HotPathStatements,
  statements: RedemptionStatements,
  lookups: CoalescedLookups | null,
): RefreshTokenStore {
  return {
    async createRefreshToken(token) {
      await db
        .insert(refreshTokens)
        .values({ ...token, scopes: [...token.scopes], resources: [...token.resources] });
    },
    async findRefreshToken(tokenHash) {
      const row = lookups
        ? await lookups.refreshToken(tokenHash)
        : (await hot.findRefreshToken().execute({ hash: tokenHash }))[0];
      return row ? refreshTokenFromRow(row) : null;
    },
    async markRefreshTokenUsed(tokenHash, at) {
      // RFC 9700 §4.14.2 rotation: exactly one caller may rotate a given refresh token.
      const won = await db
        .update(refreshTokens)
        .set({ usedAt: at })
        .where(
          and(
            eq(refreshTokens.tokenHash, tokenHash),
            isNull(refreshTokens.usedAt),
            isNull(refreshTokens.revokedAt),
          ),
        )
        .returning({ tokenHash: refreshTokens.tokenHash });
      return won.length === 1;
    },
    async findRefreshTokenSuccessor(parentHash) {
      const [parent] = await hot.findRefreshToken().execute({ hash: parentHash });
      if (!parent) return null;
      // A rotation names the successor in the rotated row: one primary-key read.
      if (parent.successorHash !== null) {
        const [successor] = await hot.findRefreshToken().execute({ hash: parent.successorHash });
        return successor ? refreshTokenFromRow(successor) : null;
      }
      // Written outside a rotation, or rotated by a release from before `successor_hash`: the
      // child among its grant's tokens (the `grant_id` index), so no index on `parent_hash`.
      const [child] = await db
        .select()
        .from(refreshTokens)
        .where(and(eq(refreshTokens.grantId, parent.grantId), eq(refreshTokens.parentHash, parentHash)))
        .limit(1);
      return child ? refreshTokenFromRow(child) : null;
    },
    async revokeRefreshToken(tokenHash, at) {
      await db
        .update(refreshTokens)
        .set({ revokedAt: at })
        .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.revokedAt)));
    },
    async findRefreshTokenWithGrantAndUser(tokenHash) {
      // Shared by the refreshes of one event-loop turn on the pool; the rotation that follows is
      // still one conditional statement per token (RFC 9700 §4.14.2).
      const row = lookups
        ? await lookups.refreshTokenWithGrantAndUser(tokenHash)
        : (await statements.refreshTokenWithGrantAndUser().execute({ hash: tokenHash }))[0];
      if (!row) return null;
      return {
        token: refreshTokenFromRow(row.token),
        grant: row.grant ? grantFromRow(row.grant) : null,
        user: row.user ? userFromRow(row.user) : null,
      };
    },
    async rotateRefreshToken(tokenHash, at, issued) {
      // RFC 9700 §4.14.2 in one statement: the conditional UPDATE and the inserts that depend on it
      // (see consumeAndStore).
      return consumeAndStore(statements, 'refresh', tokenHash, at, issued);
    },
  };
}

export function refreshTokenFromRow(row: typeof refreshTokens.$inferSelect): RefreshToken {
  return {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    clientId: row.clientId,
    sub: row.sub,
    scopes: row.scopes,
    resources: row.resources,
    parentHash: row.parentHash,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    usedAt: row.usedAt,
    revokedAt: row.revokedAt,
    dpopJkt: row.dpopJkt,
    ...(row.sealedUnderParent === null ? {} : { sealedUnderParent: row.sealedUnderParent }),
  };
}
