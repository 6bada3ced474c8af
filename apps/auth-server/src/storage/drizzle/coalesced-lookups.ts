import type { accessTokens, refreshTokens } from '../../db/schema.js';
import { type Coalescer, createCoalescer } from './coalescer.js';
import type { HotPathStatements, RedemptionStatements } from './prepared-statements.js';

type AccessTokenRow = typeof accessTokens.$inferSelect;
type RefreshTokenRow = typeof refreshTokens.$inferSelect;
type RefreshTokenJoinRow = Awaited<
  ReturnType<ReturnType<RedemptionStatements['refreshTokensWithGrantAndUser']>['execute']>
>[number];

/**
 * The reads by token hash that every introspection and every refresh makes, coalesced: the requests
 * of one event-loop turn share one `token_hash = any($1)` statement (see coalescer.ts). Only for
 * the store set on the pool: inside a transaction the reads stay one statement each, on that
 * transaction's connection.
 */
export interface CoalescedLookups {
  accessToken: Coalescer<string, AccessTokenRow>;
  refreshToken: Coalescer<string, RefreshTokenRow>;
  refreshTokenWithGrantAndUser: Coalescer<string, RefreshTokenJoinRow>;
}

export interface CoalescedLookupOptions {
  /** Most distinct token hashes per statement; default 64. */
  maxBatch?: number;
}

export function createCoalescedLookups(
  hot: HotPathStatements,
  statements: RedemptionStatements,
  options: CoalescedLookupOptions = {},
): CoalescedLookups {
  const maxBatch = options.maxBatch ?? 64;
  return {
    accessToken: createCoalescer({
      readBatch: (hashes) => hot.findAccessTokens().execute({ hashes: [...hashes] }),
      keyOf: (row) => row.tokenHash,
      maxBatch,
    }),
    refreshToken: createCoalescer({
      readBatch: (hashes) => hot.findRefreshTokens().execute({ hashes: [...hashes] }),
      keyOf: (row) => row.tokenHash,
      maxBatch,
    }),
    refreshTokenWithGrantAndUser: createCoalescer({
      readBatch: (hashes) => statements.refreshTokensWithGrantAndUser().execute({ hashes: [...hashes] }),
      keyOf: (row) => row.token.tokenHash,
      maxBatch,
    }),
  };
}
