import type { AccessTokenStore, OpaqueAccessToken } from '@oidc-orders/oauth-core';
import { and, eq, isNull } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { accessTokens, revokedJwtAccessTokens } from '../../db/schema.js';
import type { HotPathStatements } from './prepared-statements.js';

/** Opaque access tokens (introspected, RFC 7662) and the revoked JWT access tokens' `jti`s. */
export function createAccessTokenStore(db: AppDatabase, hot: HotPathStatements): AccessTokenStore {
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
      // Introspection: one SELECT by primary key, never cached (revocation is visible at once).
      const [row] = await hot.findAccessToken().execute({ hash: tokenHash });
      return row ? accessTokenFromRow(row) : null;
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
