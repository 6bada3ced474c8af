import type { AccessTokenStore, OpaqueAccessToken } from '@oidc-orders/oauth-core';
import { and, eq, isNull } from 'drizzle-orm';
import { userFromRow } from '../../accounts/drizzle/user-store.js';
import type { AppDatabase } from '../../db/client.js';
import { accessTokens, revokedJwtAccessTokens } from '../../db/schema.js';
import type { CoalescedLookups } from './coalesced-lookups.js';
import type { HotPathStatements } from './prepared-statements.js';

/** Opaque access tokens (introspected, RFC 7662) and the revoked JWT access tokens' `jti`s. */
export function createAccessTokenStore(
  db: AppDatabase,
  hot: HotPathStatements,
  lookups: CoalescedLookups | null,
): AccessTokenStore {
  return {
    async createAccessToken(token) {
      // One INSERT, no transaction around it (client_credentials writes nothing else).
      await hot.createAccessToken().execute({
        ...token,
        scopes: [...token.scopes],
        audience: [...token.audience],
        claims: { ...token.claims },
      });
    },
    async findAccessToken(tokenHash) {
      // Introspection: a SELECT by primary key, shared by the lookups of one event-loop turn on the
      // pool, never cached (RFC 7009 §2: revocation is visible at once).
      const row = lookups
        ? await lookups.accessToken(tokenHash)
        : (await hot.findAccessToken().execute({ hash: tokenHash }))[0];
      return row ? accessTokenFromRow(row) : null;
    },
    async findAccessTokenWithUser(tokenHash) {
      // UserInfo and introspection: the token and the "user still enabled" check in one read,
      // shared like findAccessToken's.
      const row = lookups
        ? await lookups.accessTokenWithUser(tokenHash)
        : (await hot.findAccessTokenWithUser().execute({ hash: tokenHash }))[0];
      if (!row) return null;
      return { token: accessTokenFromRow(row.token), user: row.user ? userFromRow(row.user) : null };
    },
    async revokeAccessToken(tokenHash, at) {
      await db
        .update(accessTokens)
        .set({ revokedAt: at })
        .where(and(eq(accessTokens.tokenHash, tokenHash), isNull(accessTokens.revokedAt)));
    },
    async revokeJwtAccessToken(jti, expiresAt) {
      await db.insert(revokedJwtAccessTokens).values({ jti, expiresAt }).onConflictDoNothing();
    },
    async isJwtAccessTokenRevoked(jti) {
      const [row] = await hot.isJwtRevoked().execute({ jti });
      return row !== undefined;
    },
  };
}

export function accessTokenFromRow(row: typeof accessTokens.$inferSelect): OpaqueAccessToken {
  return {
    tokenHash: row.tokenHash,
    grantId: row.grantId,
    clientId: row.clientId,
    sub: row.sub,
    scopes: row.scopes,
    audience: row.audience,
    issuedAt: row.issuedAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    dpopJkt: row.dpopJkt,
    claims: row.claims,
  };
}
