import type { User } from '@oidc-orders/oauth-core';
import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import {
  accessTokens,
  authorizationCodes,
  grants,
  refreshTokens,
  ssoSessions,
  users,
} from '../../db/schema.js';

/**
 * The reads and writes of `users` that other stores make together with their own tables: the token
 * redemptions that read the grant and the account in one statement (the hot path of every refresh
 * and code exchange), the seed's upsert in the registry transaction, and the sign-out of disabled
 * accounts. They live here so that SQL on the account tables has one home (src/accounts/); callers
 * finish and prepare the statements as before, so the SQL and the prepared names are unchanged.
 */

/** A refresh token with its grant and its account; a disabled account joins as null, as `findUserBySub` finds none. */
export function selectRefreshTokenWithGrantAndUser(db: AppDatabase) {
  return db
    .select({ token: refreshTokens, grant: grants, user: users })
    .from(refreshTokens)
    .leftJoin(grants, eq(grants.id, refreshTokens.grantId))
    .leftJoin(users, and(eq(users.sub, refreshTokens.sub), isNull(users.disabledAt)));
}

/** An authorization code with its grant and its account; a disabled account joins as null. */
export function selectCodeWithGrantAndUser(db: AppDatabase) {
  return db
    .select({ code: authorizationCodes, grant: grants, user: users })
    .from(authorizationCodes)
    .leftJoin(grants, eq(grants.id, authorizationCodes.grantId))
    .leftJoin(users, and(eq(users.sub, authorizationCodes.sub), isNull(users.disabledAt)));
}

/**
 * An opaque access token with its account (UserInfo, introspection); a disabled account, or none
 * (a client's own token), joins as null.
 */
export function selectAccessTokenWithUser(db: AppDatabase) {
  return db
    .select({ token: accessTokens, user: users })
    .from(accessTokens)
    .leftJoin(users, and(eq(users.sub, accessTokens.sub), isNull(users.disabledAt)));
}

/** The disabled accounts that still have SSO sessions, by `sub`. */
export async function disabledSubsWithSessions(db: AppDatabase): Promise<string[]> {
  const rows = await db
    .selectDistinct({ sub: ssoSessions.sub })
    .from(ssoSessions)
    .innerJoin(users, eq(users.sub, ssoSessions.sub))
    .where(isNotNull(users.disabledAt));
  return rows.map((row) => row.sub);
}

/**
 * Inserts or replaces the seed's users (inside the registry transaction `tx`). A new user starts
 * enabled; an existing one keeps its state, which the seed and the operator decide
 * (./user-ownership.ts: the seed re-enables only the users it disabled). An address the user
 * proved by a mailed link stays verified while the seed keeps it.
 */
export async function upsertSeedUsers(
  tx: AppDatabase,
  seedUsers: readonly User[],
  now: number,
): Promise<void> {
  for (const user of seedUsers) {
    const row = {
      ...user,
      allowedScopes: user.allowedScopes === null ? null : [...user.allowedScopes],
      groups: user.groups == null ? undefined : [...user.groups],
      updatedAt: now,
    };
    const emailVerified = sql`${user.emailVerified} or (${users.emailVerified} and ${users.email} is not distinct from ${user.email})`;
    await tx
      .insert(users)
      .values(row)
      .onConflictDoUpdate({ target: users.sub, set: { ...row, emailVerified } });
  }
}
