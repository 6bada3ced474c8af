import type { AuthorizationCode, Grant } from '../model.js';
import type {
  AuthorizationCodeWithGrantAndUser,
  IssuedTokenRecords,
  ProtocolStores,
  RefreshTokenWithGrantAndUser,
  TokenStores,
} from '../storage/index.js';

/**
 * The reads and the one write of a code redemption or a refresh-token rotation. Each uses the
 * store's optional fast path when it has one (one read of the code or token joined with its grant
 * and user; one atomic statement for consume + writes), and otherwise the plain store methods, with
 * the same results. The fast paths exist because every database round trip on the token endpoint
 * costs latency under load: a refresh went from seven round trips to two.
 */

/** The refresh token with its grant and user; `null` when the token is unknown. */
export async function findRefreshTokenWithGrantAndUser(
  stores: Pick<ProtocolStores, 'refreshTokens' | 'grants' | 'users'>,
  tokenHash: string,
): Promise<RefreshTokenWithGrantAndUser | null> {
  if (stores.refreshTokens.findRefreshTokenWithGrantAndUser) {
    return stores.refreshTokens.findRefreshTokenWithGrantAndUser(tokenHash);
  }
  const token = await stores.refreshTokens.findRefreshToken(tokenHash);
  if (token === null) return null;
  const [grant, user] = await Promise.all([
    stores.grants.findGrant(token.grantId),
    stores.users.findUserBySub(token.sub),
  ]);
  return { token, grant, user };
}

/** The authorization code with its grant and user; `null` when the code is unknown. */
export async function findAuthorizationCodeWithGrantAndUser(
  stores: Pick<ProtocolStores, 'codes' | 'grants' | 'users'>,
  codeHash: string,
): Promise<AuthorizationCodeWithGrantAndUser | null> {
  if (stores.codes.findAuthorizationCodeWithGrantAndUser) {
    return stores.codes.findAuthorizationCodeWithGrantAndUser(codeHash);
  }
  const code = await stores.codes.findAuthorizationCode(codeHash);
  if (code === null) return null;
  const [grant, user] = await Promise.all([
    stores.grants.findGrant(code.grantId),
    stores.users.findUserBySub(code.sub),
  ]);
  return { code, grant, user };
}

/**
 * RFC 9700 §4.14.2 rotation: marks the presented refresh token used and stores what replaces it, in
 * one atomic unit. `true` only for the single caller that won the conditional update; otherwise
 * nothing is written.
 */
export async function commitRefreshTokenRotation(
  stores: Pick<ProtocolStores, 'refreshTokens' | 'transaction'>,
  tokenHash: string,
  at: number,
  issued: IssuedTokenRecords,
): Promise<boolean> {
  if (stores.refreshTokens.rotateRefreshToken) {
    return stores.refreshTokens.rotateRefreshToken(tokenHash, at, issued);
  }
  return stores.transaction(async (tx) => {
    if (!(await tx.refreshTokens.markRefreshTokenUsed(tokenHash, at))) return false;
    await writeIssued(tx, issued);
    return true;
  });
}

/**
 * RFC 6749 §10.5 (codes are single-use): consumes the code and stores the tokens issued for it, in
 * one atomic unit. `true` only for the single caller that won; otherwise nothing is written.
 */
export async function commitCodeRedemption(
  stores: Pick<ProtocolStores, 'codes' | 'transaction'>,
  codeHash: string,
  at: number,
  issued: IssuedTokenRecords,
): Promise<boolean> {
  if (stores.codes.redeemAuthorizationCode) {
    return stores.codes.redeemAuthorizationCode(codeHash, at, issued);
  }
  return stores.transaction(async (tx) => {
    if (!(await tx.codes.consumeAuthorizationCode(codeHash, at))) return false;
    await writeIssued(tx, issued);
    return true;
  });
}

/**
 * Stores a new grant and its first authorization code as one atomic unit: a code never exists
 * without its grant. The store's one-statement fast path when it has one, else a transaction.
 */
export async function storeGrantWithCode(
  stores: Pick<ProtocolStores, 'codes' | 'transaction'>,
  grant: Grant,
  code: AuthorizationCode,
): Promise<void> {
  if (stores.codes.createAuthorizationCodeWithGrant) {
    return stores.codes.createAuthorizationCodeWithGrant(grant, code);
  }
  await stores.transaction(async (tx) => {
    await tx.grants.createGrant(grant);
    await tx.codes.createAuthorizationCode(code);
  });
}

async function writeIssued(tx: TokenStores, issued: IssuedTokenRecords): Promise<void> {
  if (issued.accessToken !== null) await tx.accessTokens.createAccessToken(issued.accessToken);
  if (issued.refreshToken !== null) await tx.refreshTokens.createRefreshToken(issued.refreshToken);
}
