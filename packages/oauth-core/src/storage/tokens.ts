import type { Grant, OpaqueAccessToken, RefreshToken, User } from '../model.js';

/**
 * What a user grant writes when it issues tokens: the new refresh token and the opaque access
 * token, each `null` when none is issued (a JWT access token is not stored).
 */
export interface IssuedTokenRecords {
  refreshToken: RefreshToken | null;
  accessToken: OpaqueAccessToken | null;
}

/** A refresh token with what a refresh needs next: its grant and its user, `null` when gone. */
export interface RefreshTokenWithGrantAndUser {
  token: RefreshToken;
  grant: Grant | null;
  user: User | null;
}

export interface RefreshTokenStore {
  createRefreshToken(token: RefreshToken): Promise<void>;
  /** The token by hash, including used and revoked ones (needed for reuse detection). */
  findRefreshToken(tokenHash: string): Promise<RefreshToken | null>;
  /**
   * Marks the token used if and only if it is unused and unrevoked, atomically across
   * processes. Returns `true` for the single caller that won the rotation.
   */
  markRefreshTokenUsed(tokenHash: string, at: number): Promise<boolean>;
  /**
   * The token that replaced `parentHash` in its rotation (the one whose `parentHash` it is), with
   * its `sealedUnderParent`; `null` when that token was never rotated or is unknown. A token has at
   * most one successor, since only the single winner of a rotation stores one.
   */
  findRefreshTokenSuccessor(parentHash: string): Promise<RefreshToken | null>;
  /** Revokes one refresh token (RFC 7009). Idempotent. */
  revokeRefreshToken(tokenHash: string, at: number): Promise<void>;
  /**
   * Optional fast path (one database read instead of three): `findRefreshToken(tokenHash)` with
   * `GrantStore.findGrant(token.grantId)` and `UserStore.findUserBySub(token.sub)`. `null` when the
   * token is unknown. Callers use `findRefreshTokenWithGrantAndUser(stores, hash)`, which falls
   * back to the three reads.
   */
  findRefreshTokenWithGrantAndUser?(tokenHash: string): Promise<RefreshTokenWithGrantAndUser | null>;
  /**
   * Optional fast path of a rotation as one atomic unit (one statement instead of a transaction of
   * four): `markRefreshTokenUsed(tokenHash, at)` and, only for its single winner, the writes of
   * `issued`. Returns `true` for that winner; `false` (used, revoked or unknown token, or a lost
   * race) writes nothing. Callers use `commitRefreshTokenRotation`, which falls back to
   * `transaction`.
   */
  rotateRefreshToken?(tokenHash: string, at: number, issued: IssuedTokenRecords): Promise<boolean>;
}

/** An opaque access token with its user: `null` for a client's own token, or when the user is gone or disabled. */
export interface AccessTokenWithUser {
  token: OpaqueAccessToken;
  user: User | null;
}

export interface AccessTokenStore {
  createAccessToken(token: OpaqueAccessToken): Promise<void>;
  findAccessToken(tokenHash: string): Promise<OpaqueAccessToken | null>;
  /**
   * Optional fast path (one database read instead of two): `findAccessToken(tokenHash)` with
   * `UserStore.findUserBySub(token.sub)`. `null` when the token is unknown. UserInfo and
   * introspection use it through `findActiveAccessTokenAndUser`, which falls back to the two reads.
   */
  findAccessTokenWithUser?(tokenHash: string): Promise<AccessTokenWithUser | null>;
  /** Revokes one opaque access token (RFC 7009). Idempotent. */
  revokeAccessToken(tokenHash: string, at: number): Promise<void>;
  /**
   * Denylists one JWT access token by `jti` until it expires (RFC 7009 for self-contained
   * tokens). Entries past `expiresAt` may be deleted.
   */
  revokeJwtAccessToken(jti: string, expiresAt: number): Promise<void>;
  isJwtAccessTokenRevoked(jti: string): Promise<boolean>;
}
