import type { AuthorizationCode, AuthorizationCodeStore } from '@oidc-orders/oauth-core';
import { and, eq, isNull } from 'drizzle-orm';
import { userFromRow } from '../../accounts/drizzle/user-store.js';
import type { AppDatabase } from '../../db/client.js';
import { authorizationCodes } from '../../db/schema.js';
import type { CoalescedLookups } from './coalesced-lookups.js';
import { grantFromRow } from './grant-store.js';
import {
  consumeAndStore,
  createCodeWithGrant,
  type HotPathStatements,
  type RedemptionStatements,
} from './prepared-statements.js';

/** RFC 6749 §4.1 authorization codes, stored as hashes. */
export function createAuthorizationCodeStore(
  db: AppDatabase,
  hot: HotPathStatements,
  statements: RedemptionStatements,
  lookups: CoalescedLookups | null,
): AuthorizationCodeStore {
  return {
    async createAuthorizationCode(code) {
      await db.insert(authorizationCodes).values(codeValues(code));
    },
    async findAuthorizationCode(codeHash) {
      const [row] = await hot.findAuthorizationCode().execute({ hash: codeHash });
      return row ? codeFromRow(row) : null;
    },
    async consumeAuthorizationCode(codeHash, at) {
      // RFC 6749 §10.5: single use. One conditional UPDATE is atomic across processes: a
      // concurrent redeemer blocks on the row lock, re-checks `used_at IS NULL`, and loses.
      const won = await db
        .update(authorizationCodes)
        .set({ usedAt: at })
        .where(and(eq(authorizationCodes.codeHash, codeHash), isNull(authorizationCodes.usedAt)))
        .returning({ codeHash: authorizationCodes.codeHash });
      return won.length === 1;
    },
    async findAuthorizationCodeWithGrantAndUser(codeHash) {
      // Shared by the exchanges of one event-loop turn on the pool; the redemption that follows is
      // still one conditional statement per code (RFC 6749 §10.5).
      const row = lookups
        ? await lookups.codeWithGrantAndUser(codeHash)
        : (await statements.codeWithGrantAndUser().execute({ hash: codeHash }))[0];
      if (!row) return null;
      return {
        code: codeFromRow(row.code),
        grant: row.grant ? grantFromRow(row.grant) : null,
        user: row.user ? userFromRow(row.user) : null,
      };
    },
    async redeemAuthorizationCode(codeHash, at, issued) {
      return consumeAndStore(statements, 'code', codeHash, at, issued);
    },
    async createAuthorizationCodeWithGrant(grant, code) {
      // One prepared statement, atomic by itself (every sign-in makes one).
      await createCodeWithGrant(statements, grant, code);
    },
  };
}

const codeValues = (code: AuthorizationCode) => ({
  ...code,
  scopes: [...code.scopes],
  resources: [...code.resources],
});

export function codeFromRow(row: typeof authorizationCodes.$inferSelect): AuthorizationCode {
  return {
    codeHash: row.codeHash,
    grantId: row.grantId,
    clientId: row.clientId,
    sub: row.sub,
    redirectUri: row.redirectUri,
    codeChallenge: row.codeChallenge,
    nonce: row.nonce,
    scopes: row.scopes,
    resources: row.resources,
    sid: row.sid,
    authTime: row.authTime,
    expiresAt: row.expiresAt,
    usedAt: row.usedAt,
    dpopJkt: row.dpopJkt,
  };
}
