import { sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import {
  selectAccessTokenWithUser,
  selectCodeWithGrantAndUser,
  selectRefreshTokenWithGrantAndUser,
} from '../../accounts/drizzle/account-joins.js';
import type { AppDatabase } from '../../db/client.js';
import { accessTokens, authorizationCodes, refreshTokens } from '../../db/schema.js';
import { type Coalescer, createCoalescer } from './coalescer.js';
import { lazy } from './prepared-statements.js';

/**
 * The reads by token hash that every introspection, refresh and code exchange makes, coalesced: the
 * requests of one event-loop turn share one `… = any($1)` statement (see coalescer.ts). Only for
 * the store set on the pool: inside a transaction the reads stay one statement each, on that
 * transaction's connection.
 *
 * These are unnamed statements (`prepare('')`: Drizzle builds the SQL once, node-postgres sends no
 * statement name), planned for every batch with its real keys, not named prepared statements: PostgreSQL freezes a prepared statement's generic plan after five executions, and a
 * generic plan for "10 keys" made while the tables were small joins `grants` by a hash join over a
 * sequential scan, which then grows with the table (measured: 200 → 1,100 µs of PostgreSQL CPU per
 * refresh within a minute of a fresh database). A plan made per batch follows the tables; its cost
 * is shared by the batch's requests.
 */
export interface CoalescedLookups {
  accessToken: Coalescer<string, AccessTokenRow>;
  /** UserInfo's and introspection's read: the token with its account. */
  accessTokenWithUser: Coalescer<string, AccessTokenJoinRow>;
  refreshToken: Coalescer<string, RefreshTokenRow>;
  refreshTokenWithGrantAndUser: Coalescer<string, RefreshTokenJoinRow>;
  /** The code exchanges of one turn share their read too; each redemption stays its own statement. */
  codeWithGrantAndUser: Coalescer<string, CodeJoinRow>;
}

type AccessTokenRow = typeof accessTokens.$inferSelect;
type RefreshTokenRow = typeof refreshTokens.$inferSelect;
type AccessTokenJoinRow = Awaited<
  ReturnType<ReturnType<ReturnType<typeof createBatchReads>['accessTokensWithUser']>['execute']>
>[number];
type RefreshTokenJoinRow = Awaited<
  ReturnType<ReturnType<ReturnType<typeof createBatchReads>['refreshTokensWithGrantAndUser']>['execute']>
>[number];

type CodeJoinRow = Awaited<
  ReturnType<ReturnType<ReturnType<typeof createBatchReads>['codesWithGrantAndUser']>['execute']>
>[number];

export interface CoalescedLookupOptions {
  /** Most distinct token hashes per statement; default 64. */
  maxBatch?: number;
}

/** `column = any($1::text[])`: one parameter, the same statement text whatever the batch size. */
function anyOfHashes(column: AnyPgColumn) {
  return sql`${column} = any(${sql.placeholder('hashes')}::text[])`;
}

/** The batch reads, each built once; `''` is no name: an unnamed statement, planned per batch. */
function createBatchReads(db: AppDatabase) {
  return {
    accessTokens: lazy(() =>
      db.select().from(accessTokens).where(anyOfHashes(accessTokens.tokenHash)).prepare(''),
    ),
    accessTokensWithUser: lazy(() =>
      selectAccessTokenWithUser(db).where(anyOfHashes(accessTokens.tokenHash)).prepare(''),
    ),
    refreshTokens: lazy(() =>
      db.select().from(refreshTokens).where(anyOfHashes(refreshTokens.tokenHash)).prepare(''),
    ),
    refreshTokensWithGrantAndUser: lazy(() =>
      selectRefreshTokenWithGrantAndUser(db).where(anyOfHashes(refreshTokens.tokenHash)).prepare(''),
    ),
    codesWithGrantAndUser: lazy(() =>
      selectCodeWithGrantAndUser(db).where(anyOfHashes(authorizationCodes.codeHash)).prepare(''),
    ),
  };
}

export function createCoalescedLookups(
  db: AppDatabase,
  options: CoalescedLookupOptions = {},
): CoalescedLookups {
  const maxBatch = options.maxBatch ?? 64;
  const reads = createBatchReads(db);
  const read = (hashes: readonly string[]) => ({ hashes: [...hashes] });
  return {
    accessToken: createCoalescer({
      readBatch: (hashes) => reads.accessTokens().execute(read(hashes)),
      keyOf: (row) => row.tokenHash,
      maxBatch,
    }),
    accessTokenWithUser: createCoalescer({
      readBatch: (hashes) => reads.accessTokensWithUser().execute(read(hashes)),
      keyOf: (row) => row.token.tokenHash,
      maxBatch,
    }),
    refreshToken: createCoalescer({
      readBatch: (hashes) => reads.refreshTokens().execute(read(hashes)),
      keyOf: (row) => row.tokenHash,
      maxBatch,
    }),
    refreshTokenWithGrantAndUser: createCoalescer({
      readBatch: (hashes) => reads.refreshTokensWithGrantAndUser().execute(read(hashes)),
      keyOf: (row) => row.token.tokenHash,
      maxBatch,
    }),
    codeWithGrantAndUser: createCoalescer({
      readBatch: (hashes) => reads.codesWithGrantAndUser().execute(read(hashes)),
      keyOf: (row) => row.code.codeHash,
      maxBatch,
    }),
  };
}
